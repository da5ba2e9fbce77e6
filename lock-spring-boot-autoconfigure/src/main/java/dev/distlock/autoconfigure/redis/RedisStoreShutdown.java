package dev.distlock.autoconfigure.redis;

import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockProvider;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;

/**
 * Closes the Redis store's providers (their release subscription and their connection)
 * when the application stops: after distlock has released the locks still held, and
 * before the Redis connection factory stops (phase 0). Left to bean destruction, which
 * comes after every lifecycle has stopped, the subscription would be stopped on a client
 * already shut down: Lettuce and netty then log warnings and errors, and the shutdown
 * waits for a subscription that can no longer answer.
 */
final class RedisStoreShutdown implements SmartLifecycle {

	/**
	 * Below distlock's release of the locks still held, above the connection factory's.
	 */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 8192;

	private final ObjectProvider<LockProvider> providers;

	private volatile boolean running;

	RedisStoreShutdown(ObjectProvider<LockProvider> providers) {
		this.providers = providers;
	}

	@Override
	public void start() {
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
		this.providers.orderedStream()
			.filter(RedisLockProvider.class::isInstance)
			.map(RedisLockProvider.class::cast)
			.forEach(RedisLockProvider::close);
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
