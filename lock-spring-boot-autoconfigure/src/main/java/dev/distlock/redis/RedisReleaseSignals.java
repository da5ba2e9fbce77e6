package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Release signals over one Redis channel per key prefix, on one subscription connection
 * per provider (so per JVM), however many keys are waited for: no per-lock subscription
 * to set up or exhaust. The release script publishes the lock's key only when a waiter
 * marked the lock, so an uncontended lock publishes nothing.
 *
 * <p>
 * The subscription starts on the first wait, in the background: until it is confirmed,
 * and whenever the connection is being recovered, waiters fall back to their retry
 * interval. A subscription that Redis refuses (an ACL user without the right to
 * subscribe) is reported once and not retried; waiters then poll. Messages are dispatched
 * on the client's I/O thread, where a callback only unparks a waiter.
 */
final class RedisReleaseSignals implements ReleaseSignals, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisReleaseSignals.class);

	private final RedisConnectionFactory connectionFactory;

	private final String channel;

	private final ConcurrentMap<String, List<Runnable>> listeners = new ConcurrentHashMap<>();

	private final Object lifecycle = new Object();

	private @Nullable RedisMessageListenerContainer container;

	private boolean closed;

	RedisReleaseSignals(RedisConnectionFactory connectionFactory, String channel) {
		this.connectionFactory = connectionFactory;
		this.channel = channel;
	}

	String channel() {
		return this.channel;
	}

	@Override
	public Subscription subscribe(String lockKey, Runnable onRelease) {
		ensureListening();
		this.listeners.compute(lockKey, (key, current) -> {
			List<Runnable> list = (current != null) ? current : new CopyOnWriteArrayList<>();
			list.add(onRelease);
			return list;
		});
		return () -> this.listeners.computeIfPresent(lockKey, (key, current) -> {
			current.remove(onRelease);
			return current.isEmpty() ? null : current;
		});
	}

	/** Keys with a local subscriber; a finished wait leaves none behind. */
	int subscribedKeys() {
		return this.listeners.size();
	}

	@Override
	public boolean isListening() {
		RedisMessageListenerContainer current;
		synchronized (this.lifecycle) {
			current = this.container;
		}
		return current != null && current.isListening();
	}

	private void ensureListening() {
		synchronized (this.lifecycle) {
			if (this.container != null || this.closed) {
				return;
			}
			RedisMessageListenerContainer created = new RedisMessageListenerContainer();
			created.setConnectionFactory(this.connectionFactory);
			// The callback only unparks a thread: no executor hop, no thread per message.
			created.setTaskExecutor(Runnable::run);
			created.addMessageListener(this::onMessage, new ChannelTopic(this.channel));
			created.afterPropertiesSet();
			this.container = created;
			Thread starter = new Thread(() -> start(created), "distlock-subscribe");
			starter.setDaemon(true);
			starter.start();
		}
	}

	private void start(RedisMessageListenerContainer created) {
		try {
			created.start();
		}
		catch (RuntimeException ex) {
			// Said once: the container retries a lost connection by itself, and nothing
			// retries a refusal (an ACL user without the right to SUBSCRIBE), which would
			// only be refused again.
			logger.warn("Could not subscribe to lock release channel '" + this.channel + "': "
					+ NestedExceptionUtils.getMostSpecificCause(ex).getMessage()
					+ ". Waiters poll at their retry interval instead (with ACLs, the Redis user needs +subscribe and &"
					+ this.channel + " to be woken by releases)", ex);
		}
	}

	private void onMessage(Message message, byte @Nullable [] pattern) {
		String lockKey = new String(message.getBody(), StandardCharsets.UTF_8);
		List<Runnable> callbacks = this.listeners.get(lockKey);
		if (callbacks != null) {
			for (Runnable callback : callbacks) {
				callback.run();
			}
		}
	}

	@Override
	public void close() {
		RedisMessageListenerContainer current;
		synchronized (this.lifecycle) {
			this.closed = true;
			current = this.container;
			this.container = null;
		}
		if (current == null) {
			return;
		}
		// The container can block for good while it recovers a subscription to a dead
		// server (it holds its lock while it waits), so shutdown does not wait on it
		// long.
		Thread stopper = new Thread(() -> {
			try {
				current.destroy();
			}
			catch (Exception ex) {
				logger.debug("Could not stop the lock release subscription", ex);
			}
		}, "distlock-unsubscribe");
		stopper.setDaemon(true);
		stopper.start();
		try {
			stopper.join(2000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		if (stopper.isAlive()) {
			logger.warn("The lock release subscription did not stop within 2s (is Redis reachable?); leaving it");
		}
	}

}
