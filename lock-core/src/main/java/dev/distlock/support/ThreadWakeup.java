package dev.distlock.support;

import java.util.concurrent.locks.LockSupport;

/**
 * A thread that sleeps between looks at something another thread may change (a latch's
 * count, the keys of a multi-key lock), woken early by a signal.
 */
final class ThreadWakeup {

	private final Thread thread = Thread.currentThread();

	volatile boolean signalled;

	/** Something may have changed: the sleeping thread looks again. */
	void signal() {
		this.signalled = true;
		LockSupport.unpark(this.thread);
	}

	/** Sleeps until signalled or {@code pauseNanos} have passed; false if interrupted. */
	boolean park(long pauseNanos) {
		long until = System.nanoTime() + pauseNanos;
		while (!this.signalled) {
			long left = until - System.nanoTime();
			if (left <= 0) {
				return true;
			}
			LockSupport.parkNanos(this, left);
			if (Thread.currentThread().isInterrupted()) {
				return false;
			}
		}
		return true;
	}

}
