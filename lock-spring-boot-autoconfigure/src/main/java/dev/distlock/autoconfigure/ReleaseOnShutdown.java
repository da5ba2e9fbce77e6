package dev.distlock.autoconfigure;

import dev.distlock.LockTemplate;

import org.springframework.context.SmartLifecycle;

/**
 * Releases the locks still held when the application stops: after a graceful web server
 * shutdown has let requests finish (that runs in a higher phase) and before the Redis
 * connection factory stops (phase 0), so the releases can still reach Redis. A lock left
 * held would otherwise block other instances until its lease ran out.
 */
final class ReleaseOnShutdown implements SmartLifecycle {

	/**
	 * Below the web server's graceful shutdown and stop phases, above the connection
	 * factory's.
	 */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;

	private final LockTemplate template;

	private volatile boolean running;

	ReleaseOnShutdown(LockTemplate template) {
		this.template = template;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		if (this.template instanceof AutoCloseable closeable) {
			try {
				closeable.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException("Could not release the locks held at shutdown", ex);
			}
		}
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
