package dev.distlock.support;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

import dev.distlock.Lease;
import dev.distlock.LockAcquisitionException;
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
 * Between attempts the wait pauses ({@link MultiKeyWait}) until the key that was found
 * busy is released (the store's release signal, or this JVM's own release of it), its
 * holder's remaining lease ends, or the retry interval passes. Since every attempt takes
 * all keys or none, and every caller asks for them sorted, two callers with overlapping
 * keys neither deadlock nor hold a part each while waiting for the other's (Redisson's
 * multi-lock, which takes keys one by one in the caller's order, livelocks that way: its
 * issue #4050).
 */
final class MultiKeyAcquirer {

	private final LockProvider provider;

	private final StoreCalls calls;

	private final Map<String, ManagedLease> held;

	private final WaitLoop.Holder holder;

	private final WaitLoop.Background background;

	private final Function<String, @Nullable ManagedLease> reentrant;

	private final KeyWaiters localReleases;

	/**
	 * The keys of the multi-key attempts of this JVM on the wire, each with the wait that
	 * sent it; guarded by {@link #claimsLock}.
	 */
	private final Map<String, MultiKeyWait> claims = new HashMap<>();

	private final ReentrantLock claimsLock = new ReentrantLock();

	/**
	 * The waits each claim turned away, told the key its attempt found busy so that they
	 * wait for that key's release too; guarded by {@link #claimsLock}.
	 */
	private final Map<MultiKeyWait, Set<MultiKeyWait>> refused = new HashMap<>();

	MultiKeyAcquirer(LockProvider provider, Map<String, ManagedLease> held, WaitLoop.Holder holder,
			WaitLoop.Background background, Function<String, @Nullable ManagedLease> reentrant,
			KeyWaiters localReleases) {
		this.provider = provider;
		this.calls = new StoreCalls(provider);
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
	 * The blocking wait: the caller's own thread runs the wait's steps
	 * ({@link CallerThread}); an interrupt ends it, as the caller gives up.
	 * @param keys sorted, distinct
	 * @return the lease, or null when the wait ran out
	 */
	@Nullable DefaultMultiLease acquire(List<String> keys, LockSettings settings) {
		CallerThread caller = new CallerThread();
		MultiKeyWait wait = start(keys, settings, caller);
		return caller.await(wait.result, () -> wait.stop(interrupted(keys, settings, null)));
	}

	/**
	 * Starts the wait for {@code keys} (sorted, distinct) on {@code driver}, with its
	 * first step on the calling thread: the keys a scope of the calling thread holds are
	 * re-entered, the rest taken all at once.
	 */
	MultiKeyWait start(List<String> keys, LockSettings settings, WaitDriver driver) {
		return start(keys, settings, driver, this.reentrant);
	}

	/**
	 * As {@link #start(List, LockSettings, WaitDriver)}, re-entering the keys that
	 * {@code reentrant} finds held in the caller's scope.
	 */
	MultiKeyWait start(List<String> keys, LockSettings settings, WaitDriver driver,
			Function<String, @Nullable ManagedLease> reentrant) {
		Map<String, Lease> parts = new HashMap<>();
		List<String> rest = new ArrayList<>();
		for (String key : keys) {
			ManagedLease scoped = reentrant.apply(key);
			if (scoped != null) {
				parts.put(key, scoped.enter());
			}
			else {
				rest.add(key);
			}
		}
		MultiKeyWait wait = new MultiKeyWait(this, keys, parts, rest, settings, driver);
		wait.step();
		return wait;
	}

	ReleaseSignals signals() {
		return (this.provider instanceof ReleaseSignalling signalling) ? signalling.releaseSignals()
				: ReleaseSignals.NONE;
	}

	KeyWaiters localReleases() {
		return this.localReleases;
	}

	CompletableFuture<LockAttempt> tryLock(LockRequest request, @Nullable Thread caller) {
		return this.calls.tryLock(request, caller);
	}

	/** Releases, in the background, a lease nobody waits for any more. */
	void giveBack(DefaultMultiLease lease) {
		this.background.run(lease::release, "Could not release the multi-key lock " + lease.key()
				+ " that its caller stopped waiting for; it expires after its lease");
	}

	/** Releases, in the background, the locks of an attempt nobody waits for any more. */
	void giveBack(LockAttempt attempt, List<String> keys) {
		if (attempt instanceof LockAttempt.AcquiredAll acquired) {
			List<LockHandle> handles = acquired.handles();
			this.background.run(() -> releaseAll(handles), "Could not release the multi-key lock " + keys
					+ " that its caller stopped waiting for; it expires after its lease");
		}
	}

	/**
	 * The leases of an attempt that took every key in time; null for one whose answer
	 * came too late to count, whose locks are released in the background.
	 */
	@Nullable List<ManagedLease> held(LockAttempt.AcquiredAll acquired, LockSettings settings, long sent, List<String> keys,
			@Nullable Thread acquirer) {
		if (System.nanoTime() - sent < LockHandle.validityNanos(settings.leaseTime())) {
			List<ManagedLease> leases = new ArrayList<>(keys.size());
			for (LockHandle handle : acquired.handles()) {
				leases.add(this.holder.hold(handle, settings, sent, acquirer));
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
	long busyPause(LockAttempt.Busy busy, long pause, String firstKey, ReleaseSignals signals,
			Map<String, ReleaseSignals.Subscription> subscriptions, Runnable wakeup, LockSettings settings) {
		String busyKey = busyKey(busy, firstKey);
		if (signals != ReleaseSignals.NONE && !subscriptions.containsKey(busyKey)) {
			subscriptions.computeIfAbsent(busyKey, (key) -> signals.subscribe(key, wakeup));
			return -1;
		}
		long next = (signals != ReleaseSignals.NONE && signals.isListening(busyKey))
				? settings.retryInterval().toNanos() : pause;
		return busy.remaining().isZero() ? next : Math.min(next, busy.remaining().toNanos());
	}

	/**
	 * The key a busy answer names, or the request's first key for a store that names
	 * none.
	 */
	static String busyKey(LockAttempt.Busy busy, String firstKey) {
		return (busy.key() != null) ? busy.key() : firstKey;
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

	/**
	 * Marks {@code keys} as asked for by {@code claimant}, unless another wait of this
	 * JVM has an attempt on one of them on the wire: two threads of one JVM asking for
	 * overlapping keys at once would make one of them fail in the store, at the cost of a
	 * transaction there, and then both would wait for the same release.
	 * @return whether the claimant may ask the store now
	 */
	boolean claim(List<String> keys, MultiKeyWait claimant) {
		this.claimsLock.lock();
		try {
			for (String key : keys) {
				MultiKeyWait current = this.claims.get(key);
				if (current != null && current != claimant) {
					this.refused.computeIfAbsent(current, (claim) -> new LinkedHashSet<>()).add(claimant);
					return false;
				}
			}
			keys.forEach((key) -> this.claims.put(key, claimant));
			return true;
		}
		finally {
			this.claimsLock.unlock();
		}
	}

	/**
	 * Ends the claim of {@code claimant} on {@code keys} once its attempt is answered.
	 * @param taken whether the attempt took the keys: this JVM's multi-key waits for them
	 * are woken to wait for the new holder's release instead. After a busy answer they
	 * are not: the key is held elsewhere, and each would wake the other in turn
	 * @param busyKey the key a busy answer named, which the waits this claim turned away
	 * and that need it then wait for as well (the others ask the store at once); null for
	 * no such answer
	 */
	void unclaim(List<String> keys, MultiKeyWait claimant, boolean taken, @Nullable String busyKey) {
		List<String> freed = new ArrayList<>(keys.size());
		Set<MultiKeyWait> turnedAway;
		this.claimsLock.lock();
		try {
			for (String key : keys) {
				if (this.claims.remove(key, claimant)) {
					freed.add(key);
				}
			}
			turnedAway = this.refused.remove(claimant);
		}
		finally {
			this.claimsLock.unlock();
		}
		if (taken) {
			freed.forEach(this.localReleases::freed);
		}
		else if (busyKey != null && turnedAway != null) {
			turnedAway.forEach((wait) -> wait.turnedAwayBy(busyKey));
		}
	}

	/**
	 * A lease of this JVM on one of {@code keys} that the store still holds for it: held,
	 * or released with its release still on its way to the store. Such a lease stays
	 * registered until the store has answered, and leaving the registry wakes this JVM's
	 * multi-key waits for the key; a wait that asked the store meanwhile would only be
	 * told busy. A released lease counts only until its deadline, when the store lets the
	 * key go anyway.
	 */
	@Nullable ManagedLease heldHere(List<String> keys) {
		for (String key : keys) {
			ManagedLease local = this.held.get(key);
			if (local != null && (local.heldNow() || (local.released() && local.nanosToDeadline() > 0))) {
				return local;
			}
		}
		return null;
	}

	static LockAcquisitionException interrupted(List<String> keys, LockSettings settings, @Nullable Exception cause) {
		String key = String.join(",", keys);
		return new LockAcquisitionException(key, settings.waitTime(),
				"Interrupted while waiting for the locks " + keys + "; none of them is held", cause);
	}

}
