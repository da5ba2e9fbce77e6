package dev.distlock.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * The wait for a multi-key lock, as a state machine that holds no thread between its
 * steps: while a key is held in this JVM, pause until its release (or its holder's
 * deadline); else one {@link dev.distlock.spi.LockKind#MULTI} attempt, all keys or none;
 * on a busy answer, pause until the busy key's release signal, its remaining lease, the
 * retry interval (or backoff) or the deadline. The answer completes {@link #result}: the
 * lease of all keys (with those re-entered), or null when the wait ran out.
 */
final class MultiKeyWait extends PausingWait {

	final CompletableFuture<@Nullable DefaultMultiLease> result = new CompletableFuture<>();

	private final MultiKeyAcquirer acquirer;

	private final List<String> keys;

	/** The keys' leases so far: those re-entered, then those taken. */
	private final Map<String, Lease> parts;

	private final LockRequest request;

	private final LockSettings settings;

	private final long deadline;

	private final ReleaseSignals signals;

	private final Backoff backoff;

	private final Map<String, ReleaseSignals.Subscription> subscriptions = new ConcurrentHashMap<>();

	private final List<KeyWaiters.Registration> local;

	private final AtomicBoolean ended = new AtomicBoolean();

	/**
	 * @param keys all keys, sorted
	 * @param parts the leases of the keys re-entered
	 * @param rest the keys to take, sorted, at least one
	 */
	MultiKeyWait(MultiKeyAcquirer acquirer, List<String> keys, Map<String, Lease> parts, List<String> rest,
			LockSettings settings, WaitDriver driver) {
		super(driver);
		this.acquirer = acquirer;
		this.keys = keys;
		this.parts = parts;
		this.settings = settings;
		this.deadline = System.nanoTime() + settings.waitTime().toNanos();
		boolean waiting = !settings.waitTime().isZero();
		this.request = LockRequest.all(rest, settings.leaseTime()).withWaiting(waiting);
		this.signals = waiting ? acquirer.signals() : ReleaseSignals.NONE;
		this.backoff = new Backoff(settings.retryInterval().toNanos());
		this.local = waiting ? acquirer.localReleases().register(rest, this::signal) : List.of();
	}

	@Override
	void step() {
		try {
			if (this.result.isDone()) {
				end(null, null);
				return;
			}
			if (this.driver.interrupted()) {
				end(null, MultiKeyAcquirer.interrupted(this.keys, this.settings, null));
				return;
			}
			this.signalled = false;
			ManagedLease localHolder = this.acquirer.heldHere(this.request.keys());
			if (localHolder == null && (!this.request.waiting() || this.acquirer.claim(this.request.keys(), this))) {
				attempt();
				return;
			}
			// Another caller of this JVM holds a key, or asks the store for one: its
			// release, or the answer, wakes this wait.
			long remainingWait = this.deadline - System.nanoTime();
			if (remainingWait <= 0) {
				end(null, null);
				return;
			}
			long pause = Math.min(this.settings.retryInterval().toNanos(), remainingWait);
			pause(Math.max(0, (localHolder != null) ? Math.min(pause, localHolder.nanosToDeadline()) : pause));
		}
		catch (RuntimeException ex) {
			end(null, ex);
		}
	}

	private void attempt() {
		long sent = System.nanoTime();
		CompletableFuture<LockAttempt> answer;
		try {
			answer = this.acquirer.tryLock(this.request, this.driver.thread());
		}
		catch (RuntimeException ex) {
			answer = CompletableFuture.failedFuture(ex);
		}
		if (answer.isDone()) {
			answered(answer, sent);
		}
		else {
			CompletableFuture<LockAttempt> pending = answer;
			pending.whenComplete((attempt, ex) -> this.driver.execute(() -> answered(pending, sent)));
		}
	}

	private void answered(CompletableFuture<LockAttempt> answer, long sent) {
		try {
			LockAttempt attempt;
			try {
				attempt = CallerThread.join(answer);
			}
			catch (LockBackendException ex) {
				throw this.driver.interrupted() ? MultiKeyAcquirer.interrupted(this.keys, this.settings, ex) : ex;
			}
			if (this.result.isDone()) {
				unclaim(false, null);
				this.acquirer.giveBack(attempt, this.keys);
				end(null, null);
				return;
			}
			if (attempt instanceof LockAttempt.AcquiredAll acquired) {
				List<ManagedLease> leases = this.acquirer.held(acquired, this.settings, sent, this.keys,
						this.driver.thread());
				if (leases != null) {
					// Held before the claim ends, so that a local wait it wakes finds
					// the keys held here rather than asking the store for them.
					try {
						end(leases, null);
					}
					finally {
						unclaim(true, null);
					}
					return;
				}
			}
			unclaim(false, (attempt instanceof LockAttempt.Busy busy)
					? MultiKeyAcquirer.busyKey(busy, this.request.key()) : null);
			afterBusy(attempt);
		}
		catch (RuntimeException ex) {
			unclaim(false, null);
			end(null, ex);
		}
	}

	/** A try with no wait time claims no keys, so it has none to give up. */
	private void unclaim(boolean taken, @Nullable String busyKey) {
		if (this.request.waiting()) {
			this.acquirer.unclaim(this.request.keys(), this, taken, busyKey);
		}
	}

	/**
	 * After another wait of this JVM, whose claim kept this one from asking the store,
	 * found {@code busyKey} busy: waits for that key's release as well when this wait
	 * needs it, else asks the store now. Without it this wait would sleep through the
	 * key's release until its retry interval.
	 */
	void turnedAwayBy(String busyKey) {
		if (!this.request.keys().contains(busyKey)) {
			signal();
			return;
		}
		if (this.signals == ReleaseSignals.NONE || this.ended.get()) {
			return;
		}
		this.subscriptions.computeIfAbsent(busyKey, (key) -> this.signals.subscribe(key, this::signal));
		if (this.ended.get()) {
			close(busyKey);
		}
	}

	private void close(String key) {
		ReleaseSignals.Subscription subscription = this.subscriptions.remove(key);
		if (subscription != null) {
			subscription.close();
		}
	}

	private void afterBusy(LockAttempt attempt) {
		long remainingWait = this.deadline - System.nanoTime();
		if (remainingWait <= 0) {
			end(null, null);
			return;
		}
		long pause = this.backoff.nextPauseNanos();
		if (attempt instanceof LockAttempt.Busy busy) {
			pause = this.acquirer.busyPause(busy, pause, this.request.key(), this.signals, this.subscriptions,
					this::signal, this.settings);
			if (pause < 0) {
				step();
				return;
			}
		}
		pause(Math.min(pause, remainingWait));
	}

	/**
	 * Gives up for a caller that no longer waits for the answer (a cancelled future): the
	 * result fails at once, and a lease it already had is released.
	 */
	void cancel(RuntimeException reason) {
		if (!this.result.completeExceptionally(reason) && !this.result.isCompletedExceptionally()) {
			DefaultMultiLease lease = this.result.join();
			if (lease != null) {
				this.acquirer.giveBack(lease);
			}
		}
		stop(reason);
	}

	/** Ends a pausing wait whose caller gave up; see {@link PausingWait#unpause}. */
	void stop(RuntimeException reason) {
		if (unpause()) {
			end(null, reason);
		}
	}

	/**
	 * Unsubscribes, then completes the result; the leases nobody takes any more (the
	 * result was cancelled, or the wait failed) are released.
	 */
	private void end(@Nullable List<ManagedLease> taken, @Nullable RuntimeException failure) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		// Removed as closed: a watch racing with this end closes what it added.
		new ArrayList<>(this.subscriptions.keySet()).forEach(this::close);
		this.local.forEach(KeyWaiters.Registration::close);
		DefaultMultiLease lease = null;
		if (taken != null) {
			taken.forEach((part) -> this.parts.put(part.key(), part));
			lease = new DefaultMultiLease(this.keys, this.keys.stream().map(this.parts::get).toList());
		}
		boolean completed = (failure != null) ? this.result.completeExceptionally(failure)
				: this.result.complete(lease);
		if (!completed || lease == null) {
			new ArrayList<>(this.parts.values()).forEach(Lease::release);
		}
	}

}
