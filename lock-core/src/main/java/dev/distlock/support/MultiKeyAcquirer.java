package dev.distlock.support;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Function;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.MultiLocking;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * The wait for a multi-key lock: the keys deduplicated and sorted, those the thread holds
 * in a scope re-entered, the rest taken by {@link MultiLocking#tryLockAll} in one attempt
 * per round, all or none, until they are all taken or the one wait time runs out.
 *
 * <p>
 * Between attempts the caller sleeps until the key that was found busy is released (the
 * store's release signal, or this JVM's own release of it), its holder's remaining lease
 * ends, or the retry interval passes. Since every attempt takes all keys or none, and
 * every caller asks for them sorted, two callers with overlapping keys neither deadlock
 * nor hold a part each while waiting for the other's (Redisson's multi-lock, which takes
 * keys one by one in the caller's order, livelocks that way: its issue #4050).
 */
final class MultiKeyAcquirer {

	private final MultiLocking provider;

	private final Map<String, ManagedLease> held;

	private final WaitLoop.Holder holder;

	private final WaitLoop.Background background;

	private final Function<String, @Nullable ManagedLease> reentrant;

	private final KeyWaiters localReleases;

	MultiKeyAcquirer(MultiLocking provider, Map<String, ManagedLease> held, WaitLoop.Holder holder,
			WaitLoop.Background background, Function<String, @Nullable ManagedLease> reentrant,
			KeyWaiters localReleases) {
		this.provider = provider;
		this.held = held;
		this.holder = holder;
		this.background = background;
		this.reentrant = reentrant;
		this.localReleases = localReleases;
	}

	/** The keys a caller asked for, deduplicated and sorted; at least one. */
	static List<String> sortedKeys(@Nullable Collection<String> keys) {
		if (keys == null || keys.isEmpty()) {
			throw new IllegalArgumentException("A multi-key lock needs at least one key but got " + keys);
		}
		TreeSet<String> sorted = new TreeSet<>();
		for (String key : keys) {
			if (key == null || key.isBlank()) {
				throw new IllegalArgumentException(
						"Lock keys must not be null or blank but " + keys + " contains '" + key + "'");
			}
			sorted.add(key);
		}
		return List.copyOf(sorted);
	}

	/**
	 * @param keys sorted, distinct
	 * @return the lease, or null when the wait ran out
	 */
	@Nullable DefaultMultiLease acquire(List<String> keys, LockSettings settings) {
		long deadline = System.nanoTime() + settings.waitTime().toNanos();
		Map<String, Lease> parts = new HashMap<>();
		List<String> rest = new ArrayList<>();
		for (String key : keys) {
			ManagedLease scoped = this.reentrant.apply(key);
			if (scoped != null) {
				parts.put(key, scoped.enter());
			}
			else {
				rest.add(key);
			}
		}
		boolean done = false;
		try {
			if (!rest.isEmpty()) {
				List<ManagedLease> taken = takeAll(rest, settings, deadline);
				if (taken == null) {
					return null;
				}
				for (ManagedLease lease : taken) {
					parts.put(lease.key(), lease);
				}
			}
			done = true;
			return new DefaultMultiLease(keys, keys.stream().map(parts::get).toList());
		}
		finally {
			if (!done) {
				parts.values().forEach(Lease::release);
			}
		}
	}

	private @Nullable List<ManagedLease> takeAll(List<String> keys, LockSettings settings, long deadline) {
		boolean waiting = !settings.waitTime().isZero();
		ReleaseSignals signals = (waiting && this.provider instanceof ReleaseSignalling signalling)
				? signalling.releaseSignals() : ReleaseSignals.NONE;
		LocalQueue wakeup = new LocalQueue();
		wakeup.waiter = Thread.currentThread();
		Map<String, ReleaseSignals.Subscription> subscriptions = new HashMap<>();
		List<KeyWaiters.Registration> local = waiting ? this.localReleases.register(keys, wakeup::signal) : List.of();
		Backoff backoff = new Backoff(settings.retryInterval().toNanos());
		try {
			while (true) {
				if (Thread.currentThread().isInterrupted()) {
					throw interrupted(keys, settings, null);
				}
				wakeup.signalled = false;
				ManagedLease localHolder = heldHere(keys);
				if (localHolder != null) {
					// Another thread of this JVM holds a key: its release wakes us.
					long remainingWait = deadline - System.nanoTime();
					if (remainingWait <= 0) {
						return null;
					}
					pause(wakeup, Math.max(0, Math.min(Math.min(settings.retryInterval().toNanos(), remainingWait),
							localHolder.nanosToDeadline())), keys, settings);
					continue;
				}
				long sent = System.nanoTime();
				MultiLocking.MultiAttempt attempt = attempt(keys, settings, waiting);
				if (attempt instanceof MultiLocking.MultiAttempt.Acquired acquired) {
					if (System.nanoTime() - sent < ManagedLease.validityNanos(settings.leaseTime())) {
						List<ManagedLease> leases = new ArrayList<>(keys.size());
						for (LockHandle handle : acquired.handles()) {
							leases.add(this.holder.hold(handle, settings, sent));
						}
						return leases;
					}
					List<LockHandle> late = acquired.handles();
					this.background.run(() -> this.provider.releaseAll(late),
							"Could not clean up the late multi-key lock " + keys);
				}
				long remainingWait = deadline - System.nanoTime();
				if (remainingWait <= 0) {
					return null;
				}
				long pause = backoff.nextPauseNanos();
				if (attempt instanceof MultiLocking.MultiAttempt.Busy busy) {
					if (signals != ReleaseSignals.NONE && !subscriptions.containsKey(busy.key())) {
						subscriptions.put(busy.key(), signals.subscribe(busy.key(), wakeup::signal));
						// A release between the attempt and the subscription would go
						// unheard: look again at once, now listening.
						continue;
					}
					if (signals != ReleaseSignals.NONE && signals.isListening(busy.key())) {
						pause = settings.retryInterval().toNanos();
					}
					if (!busy.remaining().isZero()) {
						pause = Math.min(pause, busy.remaining().toNanos());
					}
				}
				pause(wakeup, Math.min(pause, remainingWait), keys, settings);
			}
		}
		finally {
			wakeup.waiter = null;
			subscriptions.values().forEach(ReleaseSignals.Subscription::close);
			local.forEach(KeyWaiters.Registration::close);
		}
	}

	private MultiLocking.MultiAttempt attempt(List<String> keys, LockSettings settings, boolean waiting) {
		try {
			return this.provider.tryLockAll(keys, settings.leaseTime(), waiting);
		}
		catch (LockBackendException ex) {
			if (Thread.currentThread().isInterrupted()) {
				throw interrupted(keys, settings, ex);
			}
			throw ex;
		}
	}

	private @Nullable ManagedLease heldHere(List<String> keys) {
		for (String key : keys) {
			ManagedLease local = this.held.get(key);
			if (local != null && local.heldNow()) {
				return local;
			}
		}
		return null;
	}

	private static void pause(LocalQueue wakeup, long pauseNanos, List<String> keys, LockSettings settings) {
		if (!wakeup.park(pauseNanos)) {
			throw interrupted(keys, settings, null);
		}
	}

	static LockAcquisitionException interrupted(List<String> keys, LockSettings settings, @Nullable Exception cause) {
		String key = String.join(",", keys);
		return new LockAcquisitionException(key, settings.waitTime(),
				"Interrupted while waiting for the locks " + keys + "; none of them is held", cause);
	}

}
