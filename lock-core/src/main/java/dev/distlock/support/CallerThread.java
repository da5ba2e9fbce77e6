package dev.distlock.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * The driver of a blocking caller's wait: the caller's own thread runs its waiter's steps
 * while it waits for the answer, so a blocking acquire costs no other thread, a release
 * signal wakes the caller directly (as one unpark), and an interrupt reaches the waiter
 * between two store calls, never inside one.
 */
final class CallerThread implements WaitDriver {

	private final Thread thread = Thread.currentThread();

	private final ConcurrentLinkedQueue<Runnable> steps = new ConcurrentLinkedQueue<>();

	/** Timed steps; only the caller's thread touches the list. */
	private final List<TimedStep> timed = new ArrayList<>(1);

	@Override
	public void execute(Runnable step) {
		this.steps.add(step);
		if (Thread.currentThread() != this.thread) {
			LockSupport.unpark(this.thread);
		}
	}

	@Override
	public Timer schedule(Runnable step, long delayNanos) {
		TimedStep timed = new TimedStep(step, System.nanoTime() + delayNanos);
		// Called from the caller's steps: the list needs no lock.
		this.timed.add(timed);
		return timed;
	}

	@Override
	public Thread thread() {
		return this.thread;
	}

	@Override
	public boolean interrupted() {
		return this.thread.isInterrupted();
	}

	/**
	 * Runs the waiter's steps on this thread until {@code result} is complete, and
	 * returns it. An interrupt while the waiter pauses goes to {@code onInterrupt} (which
	 * ends the wait); one while a store call is on the wire is set aside until its answer
	 * has been handled, as a thread blocked on that answer would do.
	 */
	<T> @Nullable T await(CompletableFuture<T> result, Runnable onInterrupt) {
		boolean setAside = false;
		while (!result.isDone()) {
			Runnable step = this.steps.poll();
			if (step == null) {
				step = dueStep();
			}
			if (step != null) {
				if (setAside) {
					setAside = false;
					this.thread.interrupt();
				}
				step.run();
				continue;
			}
			if (Thread.interrupted()) {
				this.thread.interrupt();
				onInterrupt.run();
				if (result.isDone() || !this.steps.isEmpty()) {
					continue;
				}
				Thread.interrupted();
				setAside = true;
			}
			long next = nextDueNanos();
			if (next == Long.MAX_VALUE) {
				LockSupport.park(this);
			}
			else {
				LockSupport.parkNanos(this, next);
			}
		}
		if (setAside) {
			this.thread.interrupt();
		}
		return join(result);
	}

	/** The first timed step that is due, removed from the list; null if none is. */
	private @Nullable Runnable dueStep() {
		long now = System.nanoTime();
		for (int i = 0; i < this.timed.size(); i++) {
			TimedStep timed = this.timed.get(i);
			if (timed.cancelled) {
				this.timed.remove(i--);
			}
			else if (timed.dueNanos - now <= 0) {
				this.timed.remove(i);
				return timed.step;
			}
		}
		return null;
	}

	private long nextDueNanos() {
		long now = System.nanoTime();
		long next = Long.MAX_VALUE;
		for (TimedStep timed : this.timed) {
			if (!timed.cancelled) {
				next = Math.min(next, Math.max(1, timed.dueNanos - now));
			}
		}
		return next;
	}

	/** The value, or the failure as it was raised (not wrapped). */
	static <T> @Nullable T join(CompletableFuture<T> result) {
		try {
			return result.join();
		}
		catch (CompletionException ex) {
			Throwable cause = ex.getCause();
			if (cause instanceof RuntimeException runtime) {
				throw runtime;
			}
			if (cause instanceof Error error) {
				throw error;
			}
			throw ex;
		}
	}

	private static final class TimedStep implements Timer {

		final Runnable step;

		final long dueNanos;

		volatile boolean cancelled;

		TimedStep(Runnable step, long dueNanos) {
			this.step = step;
			this.dueNanos = dueNanos;
		}

		@Override
		public void cancel() {
			this.cancelled = true;
		}

	}

}
