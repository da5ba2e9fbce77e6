package dev.distlock.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * The wait of the caller at the front of this JVM's line for a key, as a small state
 * machine that holds no thread between its steps: take over a lock left for the line, or
 * attempt at the store; on a busy answer pause until a release signal, the holder's
 * deadline, the busy answer's remaining lease, the retry interval (or backoff) or the
 * deadline, whichever comes first; then again. The answer (the lease, or null when the
 * wait ran out) goes to the caller's {@link LineTurn}.
 *
 * <p>
 * Its steps run one at a time on its {@link WaitDriver}. A store that answers at once is
 * answered on the same step, with no hop to another thread.
 */
final class LockWait extends PausingWait {

	private final WaitLoop loop;

	/** The caller's acquisition, told the answer. */
	private final LineTurn owner;

	private final LocalQueue queue;

	private final LockSettings settings;

	private final long deadline;

	private final long askedNanos;

	private final ReleaseSignals signals;

	private final Backoff backoff;

	private final ReleaseSignals.@Nullable Subscription subscription;

	private final AtomicBoolean ended = new AtomicBoolean();

	private LockRequest request;

	LockWait(WaitLoop loop, LineTurn owner, LockRequest first, LockSettings settings, LocalQueue queue, long deadline,
			long askedNanos, WaitDriver driver) {
		super(driver);
		this.loop = loop;
		this.owner = owner;
		this.request = first;
		this.settings = settings;
		this.queue = queue;
		this.deadline = deadline;
		this.askedNanos = askedNanos;
		this.signals = first.waiting() ? loop.signals(first.kind()) : ReleaseSignals.NONE;
		this.backoff = new Backoff(settings.retryInterval().toNanos());
		queue.waiting(this);
		// Subscribed before the first attempt, so that no release after it goes unheard.
		this.subscription = (this.signals != ReleaseSignals.NONE) ? this.signals.subscribe(first.key(), queue::signal)
				: null;
	}

	/** Runs the first step on the calling thread. */
	void start() {
		step();
	}

	/**
	 * Runs the first step on a calling thread that must not wait even for a lock (an
	 * event loop) as far as its store call; whatever could wait (a lock left for the line
	 * to take over, a key a holder of this JVM holds, the answer's handling) goes on on
	 * the driver's threads.
	 */
	void startWithoutWaiting() {
		step(true);
	}

	@Override
	void step() {
		step(false);
	}

	private void step(boolean atOnce) {
		try {
			if (atOnce && (this.owner.result.isDone() || this.queue.handover().hasOffer()
					|| this.loop.heldHere(this.request.key()))) {
				this.driver.execute(this::step);
				return;
			}
			if (this.owner.result.isDone()) {
				end(null, null);
				return;
			}
			if (this.driver.interrupted()) {
				end(null, WaitLoop.interrupted(this.request.key(), this.settings, null));
				return;
			}
			this.signalled = false;
			ManagedLease handed = this.loop.taken(this.queue, this.settings, this.askedNanos, this.deadline,
					this.driver.thread());
			if (handed != null) {
				end(handed, null);
				return;
			}
			long pause = this.loop.localPause(this.request, this.settings, this.queue);
			if (pause < 0) {
				attempt(atOnce);
			}
			else if (atOnce) {
				this.driver.execute(this::step);
			}
			else {
				pauseOrEnd(pause);
			}
		}
		catch (RuntimeException ex) {
			if (atOnce) {
				this.driver.execute(() -> end(null, ex));
			}
			else {
				end(null, ex);
			}
		}
	}

	/**
	 * One store call; an answer already there is handled on this step, unless the step
	 * must not wait.
	 */
	private void attempt(boolean atOnce) {
		long sent = System.nanoTime();
		this.queue.callStarted();
		CompletableFuture<LockAttempt> answer;
		try {
			answer = this.loop.tryLock(this.request, this.driver.thread());
		}
		catch (RuntimeException ex) {
			answer = CompletableFuture.failedFuture(ex);
		}
		if (answer.isDone() && !atOnce) {
			answered(answer, sent);
		}
		else {
			CompletableFuture<LockAttempt> pending = answer;
			Thread caller = Thread.currentThread();
			pending.whenComplete((attempt, ex) -> {
				if (attempt instanceof LockAttempt.Acquired && this.driver.grantsWhereAnswered()
						&& Thread.currentThread() != caller) {
					// Taking a grant calls no store: on the store's thread, it saves a
					// hop. Never on the caller's, which may be an event loop.
					answered(pending, sent);
				}
				else {
					this.driver.execute(() -> answered(pending, sent));
				}
			});
		}
	}

	/**
	 * The store's answer; its failure is the answer for the callers in line behind this
	 * one too.
	 */
	private void answered(CompletableFuture<LockAttempt> answer, long sent) {
		LockAttempt attempt;
		try {
			attempt = CallerThread.join(answer);
		}
		catch (RuntimeException ex) {
			boolean interrupted = ex instanceof LockBackendException && this.driver.interrupted();
			this.queue.callEnded((ex instanceof LockBackendException failure && !interrupted) ? failure : null);
			end(null, interrupted ? WaitLoop.interrupted(this.request.key(), this.settings, ex) : ex);
			return;
		}
		this.queue.callEnded(null);
		try {
			if (this.owner.result.isDone()) {
				this.loop.giveBack(attempt);
				end(null, null);
				return;
			}
			ManagedLease lease = this.loop.outcome(this.request, attempt, this.settings, this.queue, sent,
					this.driver.thread());
			if (lease != null) {
				end(lease, null);
				return;
			}
			this.request = this.request.afterAttempt(attempt instanceof LockAttempt.Busy);
			pauseOrEnd(this.loop.storePause(attempt, this.signals, this.request.key(), this.settings, this.backoff,
					this.queue.polls(this)));
		}
		catch (RuntimeException ex) {
			end(null, ex);
		}
	}

	/**
	 * Pauses, or at the deadline ends the wait with whatever lock was left for the line.
	 */
	private void pauseOrEnd(long pauseNanos) {
		long remainingWait = this.deadline - System.nanoTime();
		if (remainingWait <= 0) {
			end(this.loop.taken(this.queue, this.settings, this.askedNanos, this.deadline, this.driver.thread()), null);
			return;
		}
		pause(Math.min(pauseNanos, remainingWait));
	}

	/**
	 * Ends a pausing wait that its caller gave up (an interrupt, a cancelled future):
	 * ignored while a step runs or a store call is on the wire, which ends the wait
	 * itself when it sees the result done or the caller interrupted.
	 * @return whether the wait ended here
	 */
	boolean stop(RuntimeException reason) {
		if (!unpause()) {
			return false;
		}
		end(null, reason);
		return true;
	}

	/**
	 * The answer: unsubscribes, gives up a place kept in the store, then tells the
	 * caller's acquisition.
	 */
	private void end(@Nullable ManagedLease lease, @Nullable RuntimeException failure) {
		if (!this.ended.compareAndSet(false, true)) {
			return;
		}
		this.queue.ended(this);
		if (this.subscription != null) {
			this.subscription.close();
		}
		if (lease == null && this.request.keepsPlace()) {
			this.loop.withdraw(this.request);
		}
		this.owner.ended(lease, failure);
	}

}
