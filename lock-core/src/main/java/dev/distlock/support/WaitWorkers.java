package dev.distlock.support;

import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The worker threads of a {@link SharedWaitDriver}: started as steps come, up to a bound,
 * and ended after a while without steps. Handing a step over takes no lock of any kind (a
 * lock-free queue, an idle worker woken by an unpark, or a thread started), so the
 * caller, which may be an event loop, is never parked, not even while workers start or
 * end, as it would be on a thread pool's own lock.
 *
 * <p>
 * A store call blocks its worker for one round trip, so the bound is the number of store
 * calls of this template's waits on the wire at once; waiters in a line, paused or
 * waiting for a signal hold no worker.
 */
final class WaitWorkers {

	private static final Log logger = LogFactory.getLog(WaitWorkers.class);

	private static final int RUNNING = 0;

	private static final int IDLE = 1;

	private static final int WOKEN = 2;

	private static final int ENDED = 3;

	private final int max;

	private final long keepAliveNanos;

	private final String name;

	private final ConcurrentLinkedQueue<Runnable> steps = new ConcurrentLinkedQueue<>();

	/** Idle workers, the last to go idle first (so that the others can end). */
	private final ConcurrentLinkedDeque<Worker> idle = new ConcurrentLinkedDeque<>();

	private final AtomicInteger threads = new AtomicInteger();

	private final AtomicInteger started = new AtomicInteger();

	private volatile boolean closed;

	WaitWorkers(String name, int max, long keepAliveNanos) {
		this.name = name;
		this.max = max;
		this.keepAliveNanos = keepAliveNanos;
	}

	/**
	 * Runs {@code step} on a worker; once closed, on the calling thread, so that the wait
	 * it belongs to still ends.
	 */
	void execute(Runnable step) {
		if (this.closed) {
			step.run();
			return;
		}
		this.steps.offer(step);
		wakeOrStart();
	}

	/** Lets the workers end once no step is left. */
	void close() {
		this.closed = true;
		for (Worker worker : this.idle) {
			LockSupport.unpark(worker.thread);
		}
	}

	/** Number of worker threads alive. */
	int threads() {
		return this.threads.get();
	}

	/**
	 * A worker for the queued steps: an idle one woken, or a new one if none is idle and
	 * the bound allows; else every worker is running and takes the step when its own
	 * ends.
	 */
	private void wakeOrStart() {
		for (Worker worker = this.idle.pollFirst(); worker != null; worker = this.idle.pollFirst()) {
			if (worker.wake()) {
				return;
			}
		}
		for (int count = this.threads.get(); count < this.max; count = this.threads.get()) {
			if (this.threads.compareAndSet(count, count + 1)) {
				new Worker().thread.start();
				return;
			}
		}
	}

	private final class Worker implements Runnable {

		private final AtomicInteger state = new AtomicInteger(RUNNING);

		private final Thread thread;

		Worker() {
			this.thread = new Thread(this, WaitWorkers.this.name + started.incrementAndGet());
			this.thread.setDaemon(true);
		}

		boolean wake() {
			if (this.state.compareAndSet(IDLE, WOKEN)) {
				LockSupport.unpark(this.thread);
				return true;
			}
			return false;
		}

		@Override
		public void run() {
			try {
				while (true) {
					Runnable step = WaitWorkers.this.steps.poll();
					if (step != null) {
						runSafely(step);
					}
					else if (!idled()) {
						return;
					}
				}
			}
			finally {
				if (this.state.get() != ENDED) {
					// Ended by an Error thrown from a step.
					this.state.set(ENDED);
					WaitWorkers.this.idle.remove(this);
					WaitWorkers.this.threads.decrementAndGet();
				}
			}
		}

		/**
		 * Waits to be woken for a step.
		 * @return false if this worker ended instead: idle for its keep-alive, or closed
		 */
		private boolean idled() {
			this.state.set(IDLE);
			WaitWorkers.this.idle.addFirst(this);
			// A step queued before this worker could be seen idle is taken now.
			if (!WaitWorkers.this.steps.isEmpty()) {
				if (this.state.compareAndSet(IDLE, RUNNING)) {
					WaitWorkers.this.idle.remove(this);
				}
				this.state.set(RUNNING);
				return true;
			}
			long endAt = System.nanoTime() + WaitWorkers.this.keepAliveNanos;
			while (this.state.get() == IDLE) {
				long left = endAt - System.nanoTime();
				if ((left <= 0 || WaitWorkers.this.closed) && this.state.compareAndSet(IDLE, ENDED)) {
					WaitWorkers.this.idle.remove(this);
					WaitWorkers.this.threads.decrementAndGet();
					// A step queued as this worker ended found no idle worker and the
					// bound reached.
					if (!WaitWorkers.this.steps.isEmpty()) {
						wakeOrStart();
					}
					return false;
				}
				LockSupport.parkNanos(this, Math.max(left, 0));
			}
			this.state.set(RUNNING);
			return true;
		}

		private void runSafely(Runnable step) {
			try {
				step.run();
			}
			catch (RuntimeException ex) {
				logger.warn("A wait step failed", ex);
			}
		}

	}

}
