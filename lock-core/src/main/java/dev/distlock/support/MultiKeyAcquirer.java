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
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * The wait for a multi-key lock: the keys deduplicated and sorted, those the thread holds
 * in a scope re-entered, the rest taken by one {@link dev.distlock.spi.LockKind#MULTI}
 * attempt per round, all or none, until they are all taken or the one wait time runs out.
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

	private final LockProvider provider;

	private final Map<String, ManagedLease> held;

	private final WaitLoop.Holder holder;

	private final WaitLoop.Background background;

	private final Function<String, @Nullable ManagedLease> reentrant;

	private final KeyWaiters localReleases;

	MultiKeyAcquirer(LockProvider provider, Map<String, ManagedLease> held, WaitLoop.Holder holder,
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
		LockRequest request = LockRequest.all(keys, settings.leaseTime()).withWaiting(waiting);
		ReleaseSignals signals = (waiting && this.provider instanceof ReleaseSignalling signalling)
				? signalling.releaseSignals() : ReleaseSignals.NONE;
		ThreadWakeup wakeup = new ThreadWakeup();
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
				LockAttempt attempt = attempt(request, settings);
				if (attempt instanceof LockAttempt.AcquiredAll acquired) {
					List<ManagedLease> leases = held(acquired, settings, sent, keys);
					if (leases != null) {
						return leases;
					}
				}
				long remainingWait = deadline - System.nanoTime();
				if (remainingWait <= 0) {
					return null;
				}
				long pause = backoff.nextPauseNanos();
				if (attempt instanceof LockAttempt.Busy busy) {
					pause = busyPause(busy, pause, keys.get(0), signals, subscriptions, wakeup, settings);
					if (pause < 0) {
						continue;
					}
				}
				pause(wakeup, Math.min(pause, remainingWait), keys, settings);
			}
		}
		finally {
			subscriptions.values().forEach(ReleaseSignals.Subscription::close);
			local.forEach(KeyWaiters.Registration::close);
		}
	}

	/**
	 * The leases of an attempt that took every key in time; null for one whose answer
	 * came too late to count, whose locks are released in the background.
	 */
	private @Nullable List<ManagedLease> held(LockAttempt.AcquiredAll acquired, LockSettings settings, long sent,
			List<String> keys) {
		if (System.nanoTime() - sent < ManagedLease.validityNanos(settings.leaseTime())) {
			List<ManagedLease> leases = new ArrayList<>(keys.size());
			for (LockHandle handle : acquired.handles()) {
				leases.add(this.holder.hold(handle, settings, sent, Thread.currentThread()));
			}
			return leases;
		}
		List<LockHandle> late = acquired.handles();
		this.background.run(() -> releaseAll(late), "Could not clean up the late multi-key lock " + keys);
		return null;
	}

	/**
	 * The pause after an attempt that found a key busy, or -1 to look again at once: the
	 * first time a key is found busy, its release signals are subscribed to, and a
	 * release between the attempt and the subscription would go unheard. With signals
	 * heard, the retry interval is only the fallback for a lost one; never past the busy
	 * key's remaining lease.
	 * @param pause the backoff's pause, for a store whose signals are not heard
	 * @param firstKey the key to wait on if the store did not name the busy one
	 */
	private long busyPause(LockAttempt.Busy busy, long pause, String firstKey, ReleaseSignals signals,
			Map<String, ReleaseSignals.Subscription> subscriptions, ThreadWakeup wakeup, LockSettings settings) {
		String busyKey = (busy.key() != null) ? busy.key() : firstKey;
		if (signals != ReleaseSignals.NONE && !subscriptions.containsKey(busyKey)) {
			subscriptions.put(busyKey, signals.subscribe(busyKey, wakeup::signal));
			return -1;
		}
		long next = (signals != ReleaseSignals.NONE && signals.isListening(busyKey))
				? settings.retryInterval().toNanos() : pause;
		return busy.remaining().isZero() ? next : Math.min(next, busy.remaining().toNanos());
	}

	private LockAttempt attempt(LockRequest request, LockSettings settings) {
		try {
			return LockAttempt.join(this.provider.tryLock(request));
		}
		catch (LockBackendException ex) {
			if (Thread.currentThread().isInterrupted()) {
				throw interrupted(request.keys(), settings, ex);
			}
			throw ex;
		}
	}

	/**
	 * Releases the handles of one multi-key acquisition, in as few round trips as the
	 * store allows.
	 */
	private void releaseAll(List<LockHandle> handles) {
		if (this.provider instanceof BatchRelease batch) {
			batch.releaseAll(handles);
		}
		else {
			handles.forEach(LockHandle::release);
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

	private static void pause(ThreadWakeup wakeup, long pauseNanos, List<String> keys, LockSettings settings) {
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
