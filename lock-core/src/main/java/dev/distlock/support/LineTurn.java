package dev.distlock.support;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;

/**
 * One caller's acquisition of one key: its turn in this JVM's line for the key, then its
 * {@link LockWait} at the front. Nothing waits on a thread: the turn is let through the
 * gate by the caller ahead of it, or given up at the deadline by a timer of its
 * {@link WaitDriver}. The answer completes {@link #result}: the lease, or null when the
 * wait ran out.
 *
 * <p>
 * A store call of the caller at the gate that fails is the answer for everyone in line
 * behind it: they get a {@link LockBackendException} too, rather than waiting out their
 * wait time for a store that is not answering and then being told the lock was busy. A
 * caller whose wait time runs out in line while the caller at the gate is inside a store
 * call waits for that call too (one store timeout at most), since its outcome is this
 * caller's answer.
 */
final class LineTurn extends LocalQueue.Turn {

	final CompletableFuture<@Nullable ManagedLease> result = new CompletableFuture<>();

	private final WaitLoop loop;

	private final LocalLines lines;

	private final String line;

	private final LockRequest request;

	private final LockSettings settings;

	private final WaitDriver driver;

	private final long askedNanos;

	private final long deadline;

	private final long callTimeoutNanos;

	private final LocalQueue queue;

	private final long joinedFailures;

	private final AtomicBoolean finished = new AtomicBoolean();

	private volatile WaitDriver.Timer timer = WaitDriver.Timer.NONE;

	/** The wait at the front, once through the gate. */
	private volatile @Nullable LockWait wait;

	LineTurn(WaitLoop loop, LocalLines lines, LockRequest request, LockSettings settings, WaitDriver driver,
			long callTimeoutNanos) {
		this.loop = loop;
		this.lines = lines;
		this.request = request;
		this.settings = settings;
		this.driver = driver;
		this.callTimeoutNanos = callTimeoutNanos;
		this.askedNanos = System.nanoTime();
		this.deadline = this.askedNanos + settings.waitTime().toNanos();
		this.line = LocalLines.line(request.key(), settings);
		this.queue = lines.join(this.line);
		this.joinedFailures = this.queue.failures();
	}

	/**
	 * Enters the gate, and takes the first step at the front on the calling thread, if
	 * nobody is in line; else waits in line (a caller that does not wait gives up at
	 * once).
	 */
	LineTurn start() {
		boolean tryOnce = this.settings.waitTime().isZero();
		if (this.queue.enter(this, !tryOnce)) {
			claim();
			atGate();
		}
		else if (tryOnce) {
			claim();
			notLetThrough();
		}
		else {
			this.timer = this.driver.schedule(this::timedOut, this.deadline - System.nanoTime());
		}
		return this;
	}

	/**
	 * As {@link #start}, for a caller that must not wait even for a lock (an event loop):
	 * only a caller that finds the gate free at once takes its first step on the calling
	 * thread, as far as its store call; any other starts on the driver's threads.
	 */
	LineTurn startWithoutWaiting() {
		if (!this.queue.enterAtOnce()) {
			this.driver.execute(this::start);
			return this;
		}
		claim();
		if (this.result.isDone() || this.queue.failureSince(this.joinedFailures) != null) {
			this.driver.execute(this::atGate);
			return this;
		}
		LockWait front = front();
		front.startWithoutWaiting();
		return this;
	}

	@Override
	void letThrough() {
		this.driver.execute(this::atGate);
	}

	private void atGate() {
		this.timer.cancel();
		LockBackendException failure = this.queue.failureSince(this.joinedFailures);
		if (failure != null || this.result.isDone()) {
			this.queue.exit();
			finish(null, (failure != null) ? lineFailure(failure) : null);
			return;
		}
		front().start();
	}

	private LockWait front() {
		LockWait front = new LockWait(this.loop, this, this.request, this.settings, this.queue, this.deadline,
				this.askedNanos, this.driver);
		this.wait = front;
		return front;
	}

	/** The wait at the front ended: the gate is left for the next in line. */
	void ended(@Nullable ManagedLease lease, @Nullable RuntimeException failure) {
		this.queue.exit();
		finish(lease, failure);
	}

	private void timedOut() {
		if (claim()) {
			notLetThrough();
		}
	}

	/**
	 * Not let through in time: the answer is the store call on the wire for the line, if
	 * any, once it ends (one store timeout at most).
	 */
	private void notLetThrough() {
		AtomicBoolean once = new AtomicBoolean();
		Runnable answer = () -> {
			if (once.compareAndSet(false, true)) {
				LockBackendException failure = this.queue.failureSince(this.joinedFailures);
				finish(null, (failure != null) ? lineFailure(failure) : null);
			}
		};
		if (this.queue.onCallEnd(() -> this.driver.execute(answer))) {
			this.timer = this.driver.schedule(answer, this.callTimeoutNanos);
		}
		else {
			answer.run();
		}
	}

	/**
	 * Stops waiting for a caller that gave up (an interrupt, a cancelled future): leaves
	 * the line at once, or ends the wait at the front when it pauses.
	 */
	void stop(RuntimeException reason) {
		if (claim()) {
			this.timer.cancel();
			finish(null, reason);
			return;
		}
		LockWait front = this.wait;
		if (front != null) {
			front.stop(reason);
		}
	}

	/**
	 * Gives up for a caller that no longer waits for the answer (a cancelled future): the
	 * result fails at once, and a lease it already had is released.
	 */
	void cancel(RuntimeException reason) {
		if (!this.result.completeExceptionally(reason) && !this.result.isCompletedExceptionally()) {
			ManagedLease lease = this.result.join();
			if (lease != null) {
				this.loop.giveBack(lease);
			}
		}
		stop(reason);
	}

	/**
	 * Leaves the line and completes the result; a lease nobody takes any more (the result
	 * was cancelled) is released.
	 */
	private void finish(@Nullable ManagedLease lease, @Nullable RuntimeException failure) {
		if (!this.finished.compareAndSet(false, true)) {
			return;
		}
		this.lines.leave(this.line);
		boolean completed = (failure != null) ? this.result.completeExceptionally(failure)
				: this.result.complete(lease);
		if (!completed && lease != null) {
			this.loop.giveBack(lease);
		}
	}

	private LockBackendException lineFailure(LockBackendException failure) {
		String key = this.request.key();
		return new LockBackendException(key, "The store failed for a caller ahead of this one in the local line"
				+ " for lock '" + key + "': " + failure.getMessage(), failure);
	}

}
