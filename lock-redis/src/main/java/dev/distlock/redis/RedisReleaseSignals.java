package dev.distlock.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.UnaryOperator;

import dev.distlock.spi.ReleaseSignals;
import io.lettuce.core.cluster.RedisClusterClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.core.NestedExceptionUtils;
import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Release signals on one subscription connection per provider (so per JVM), however many
 * keys are waited for: no per-lock subscription to set up or exhaust. The release script
 * publishes the lock's key only when a waiter marked the lock, so an uncontended lock
 * publishes nothing.
 *
 * <p>
 * How signals travel is decided once per provider ({@link SignalMode}). A standalone
 * server, or a cluster with a master older than Redis 7, gets classic pub/sub: one
 * channel {@code <key-prefix>released}, subscribed through Spring Data Redis'
 * {@link RedisMessageListenerContainer}. A cluster of Redis 7 masters gets sharded
 * pub/sub: the scripts {@code SPUBLISH} to the channel of the lock's slot ({@code {<slot
 * tag>}<key-prefix>released}, in that slot, so the script stays in one slot), which
 * reaches only the nodes serving the slot, and this JVM {@code SSUBSCRIBE}s to the slots
 * its waiters wait on ({@link ShardedSubscriptions}). On a cluster the mode is found on
 * first use, from each master's {@code redis_version}.
 *
 * <p>
 * The subscription starts on the first wait, in the background: until it is confirmed,
 * and whenever the connection is being recovered, waiters fall back to their retry
 * interval. A subscription that Redis refuses (an ACL user without the right to
 * subscribe) is reported once and not retried; waiters then poll. Messages are dispatched
 * on the client's I/O thread, where a callback only unparks a waiter.
 *
 * <p>
 * No lock is held while Redis answers, and none is a monitor, so that a virtual thread
 * never pins its carrier here (JDK 21 to 23) and no caller waits out another's command
 * timeout.
 */
final class RedisReleaseSignals implements ReleaseSignals, AutoCloseable {

	private static final Log logger = LogFactory.getLog(RedisReleaseSignals.class);

	private static final long RETRY_START_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final RedisConnectionFactory connectionFactory;

	private final RedisKeys keys;

	private final ConcurrentMap<String, List<Runnable>> listeners = new ConcurrentHashMap<>();

	/** Counts local subscriptions per slot on a cluster, whatever the mode. */
	private final @Nullable ShardedSubscriptions sharded;

	/** Guards {@code started}, and {@code closed} with {@code container}. */
	private final ReentrantLock lifecycle = new ReentrantLock();

	/** The detection under way, if any; at most one at a time. */
	private final AtomicReference<@Nullable CompletableFuture<SignalMode>> detection = new AtomicReference<>();

	/** Whether a thread of its own is finding the mode for publishers. */
	private final AtomicBoolean backgroundDetection = new AtomicBoolean();

	private volatile @Nullable SignalMode mode;

	private volatile @Nullable RedisMessageListenerContainer container;

	private volatile boolean started;

	/**
	 * The first start is over: subscribed, with the waiters that polled until then woken,
	 * or given up.
	 */
	private volatile boolean startFinished;

	private volatile boolean closed;

	/** Turns a message into the lock key to wake, or null (grants to other providers). */
	private final UnaryOperator<@Nullable String> messages;

	RedisReleaseSignals(RedisConnectionFactory connectionFactory, RedisKeys keys) {
		this(connectionFactory, keys, (message) -> message);
	}

	/**
	 * @param messages turns a message into the lock key whose waiters to wake, or null to
	 * wake nobody; a fair lock's grant message names its waiter ({@link FairGrants})
	 */
	RedisReleaseSignals(RedisConnectionFactory connectionFactory, RedisKeys keys,
			UnaryOperator<@Nullable String> messages) {
		this.messages = messages;
		this.connectionFactory = connectionFactory;
		this.keys = keys;
		this.sharded = keys.isCluster() ? new ShardedSubscriptions(keys, this::onSlotListening) : null;
		this.mode = keys.isCluster() ? null : SignalMode.CLASSIC;
	}

	/**
	 * The channel a script publishes a release of {@code lockKey} to, and {@code "1"} if
	 * it must use {@code SPUBLISH}. On a cluster the mode is found once (a few round
	 * trips) on a thread of its own, never on the caller's: that lookup is not bounded by
	 * the store timeout (a hung node held a release for minutes). Until it is known, or
	 * if it fails, this call publishes classically. A signal is a hint, so one sent on
	 * the wrong kind of channel costs other JVMs' waiters at most their retry interval.
	 */
	String[] publishArgs(String lockKey) {
		SignalMode current = this.mode;
		if (current == null) {
			detectInBackground();
		}
		if (current == SignalMode.SHARDED) {
			return new String[] { this.keys.releaseChannel(RedisKeys.slotOf(lockKey)), "1" };
		}
		return new String[] { this.keys.releaseChannel(), "0" };
	}

	private void detectInBackground() {
		if (this.detection.get() != null || !this.backgroundDetection.compareAndSet(false, true)) {
			return;
		}
		Thread detector = new Thread(() -> {
			try {
				mode(false);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not tell whether the cluster has sharded pub/sub; publishing classically", ex);
			}
			finally {
				this.backgroundDetection.set(false);
			}
		}, "distlock-signal-mode");
		detector.setDaemon(true);
		detector.start();
	}

	/**
	 * The mode, found on this thread unless another thread is finding it: then null, or
	 * with {@code waitForOthers} the other thread's answer. Failures propagate; the next
	 * call tries again.
	 */
	private @Nullable SignalMode mode(boolean waitForOthers) {
		SignalMode current = this.mode;
		if (current != null) {
			return current;
		}
		CompletableFuture<SignalMode> mine = new CompletableFuture<>();
		CompletableFuture<SignalMode> running = this.detection.compareAndExchange(null, mine);
		if (running != null) {
			return waitForOthers ? join(running) : null;
		}
		try {
			// Another thread may have decided it since this one first looked.
			current = this.mode;
			if (current == null) {
				current = SignalMode.detect(this.connectionFactory);
				this.mode = current;
			}
			mine.complete(current);
			return current;
		}
		catch (RuntimeException ex) {
			mine.completeExceptionally(ex);
			throw ex;
		}
		finally {
			this.detection.set(null);
		}
	}

	private static SignalMode join(CompletableFuture<SignalMode> detection) {
		try {
			return detection.join();
		}
		catch (CompletionException ex) {
			throw (ex.getCause() instanceof RuntimeException cause) ? cause : ex;
		}
	}

	@Override
	public Subscription subscribe(String lockKey, Runnable onRelease) {
		ensureStarted();
		this.listeners.compute(lockKey, (key, current) -> {
			List<Runnable> list = (current != null) ? current : new CopyOnWriteArrayList<>();
			list.add(onRelease);
			return list;
		});
		int slot = (this.sharded != null) ? RedisKeys.slotOf(lockKey) : 0;
		if (this.sharded != null) {
			this.sharded.retain(slot);
		}
		AtomicBoolean open = new AtomicBoolean(true);
		return () -> {
			if (!open.compareAndSet(true, false)) {
				return;
			}
			this.listeners.computeIfPresent(lockKey, (key, current) -> {
				current.remove(onRelease);
				return current.isEmpty() ? null : current;
			});
			if (this.sharded != null) {
				this.sharded.release(slot);
			}
		};
	}

	/** Keys with a local subscriber; a finished wait leaves none behind. */
	int subscribedKeys() {
		return this.listeners.size();
	}

	/**
	 * Whether the first start is over; its wake of every waiter, if it subscribed, came
	 * before.
	 */
	boolean startFinished() {
		return this.startFinished;
	}

	/** Slots with a sharded subscription; a finished wait leaves none behind. */
	int subscribedSlots() {
		return (this.sharded != null) ? this.sharded.subscribedSlots() : 0;
	}

	/** The mode, once decided. */
	@Nullable SignalMode signalMode() {
		return this.mode;
	}

	@Override
	public boolean isListening() {
		if (this.mode == SignalMode.SHARDED && this.sharded != null) {
			return this.sharded.isListening();
		}
		RedisMessageListenerContainer current = this.container;
		return current != null && current.isListening();
	}

	/** In sharded mode, subscribes the key's slot on the first call. */
	@Override
	public boolean isListening(String lockKey) {
		if (this.mode == SignalMode.SHARDED && this.sharded != null) {
			return this.sharded.isListening(RedisKeys.slotOf(lockKey));
		}
		return isListening();
	}

	private void ensureStarted() {
		// Read without the lock on every wait after the first, which may run on an event
		// loop.
		if (this.started) {
			return;
		}
		this.lifecycle.lock();
		try {
			if (this.started || this.closed) {
				return;
			}
			this.started = true;
		}
		finally {
			this.lifecycle.unlock();
		}
		Thread starter = new Thread(this::start, "distlock-subscribe");
		starter.setDaemon(true);
		starter.start();
	}

	/**
	 * Finds the mode and opens the subscription connection; tries again every second
	 * while the server cannot be reached, with waiters polling meanwhile.
	 */
	private void start() {
		try {
			startUntilClosed();
		}
		finally {
			this.startFinished = true;
		}
	}

	private void startUntilClosed() {
		long pause = RETRY_START_NANOS;
		while (!this.closed) {
			try {
				if (mode(true) == SignalMode.CLASSIC) {
					startContainer();
				}
				else {
					startSharded();
				}
				return;
			}
			catch (RuntimeException ex) {
				logger.warn("Could not subscribe to lock release signals; waiters fall back to their retry interval"
						+ " while this is tried again", ex);
			}
			LockSupport.parkNanos(pause);
			pause = Math.min(pause * 2, TimeUnit.SECONDS.toNanos(30));
		}
	}

	private void startContainer() {
		String channel = this.keys.releaseChannel();
		RedisMessageListenerContainer created = new RedisMessageListenerContainer();
		created.setConnectionFactory(this.connectionFactory);
		// The callback only unparks a thread: no executor hop, no thread per message.
		created.setTaskExecutor(Runnable::run);
		created.addMessageListener(this::onMessage, new ChannelTopic(channel));
		created.afterPropertiesSet();
		this.lifecycle.lock();
		try {
			if (this.closed) {
				return;
			}
			this.container = created;
		}
		finally {
			this.lifecycle.unlock();
		}
		try {
			created.start();
			if (created.isListening()) {
				// Waiters that found their lock busy until now polled: a release since
				// their last attempt went unheard.
				wakeAll();
			}
		}
		catch (RuntimeException ex) {
			// Said once: the container retries a lost connection by itself, and nothing
			// retries a refusal (an ACL user without the right to SUBSCRIBE), which would
			// only be refused again.
			logger.warn("Could not subscribe to lock release channel '" + channel + "': "
					+ NestedExceptionUtils.getMostSpecificCause(ex).getMessage()
					+ ". Waiters poll at their retry interval instead (with ACLs, the Redis user needs +subscribe and &"
					+ channel + " to be woken by releases)", ex);
		}
	}

	private void startSharded() {
		ShardedSubscriptions subscriptions = this.sharded;
		if (subscriptions == null) {
			return;
		}
		RedisClusterClient client = (RedisClusterClient) ((LettuceConnectionFactory) this.connectionFactory)
			.getRequiredNativeClient();
		subscriptions.connect(client, this::dispatch);
		if (this.closed) {
			subscriptions.close();
			return;
		}
		// Waiters that polled until now ask for their slots on their next attempt.
		wakeAll();
	}

	private void wakeAll() {
		this.listeners.values().forEach((callbacks) -> callbacks.forEach(Runnable::run));
	}

	private void onMessage(Message message, byte @Nullable [] pattern) {
		dispatch(new String(message.getBody(), StandardCharsets.UTF_8));
	}

	private void dispatch(String message) {
		String lockKey = this.messages.apply(message);
		if (lockKey == null) {
			return;
		}
		List<Runnable> callbacks = this.listeners.get(lockKey);
		if (callbacks != null) {
			for (Runnable callback : callbacks) {
				callback.run();
			}
		}
	}

	/**
	 * A slot's subscription was confirmed: its waiters try once more, in case the lock
	 * was released after their last attempt and before the subscription took effect.
	 */
	private void onSlotListening(int slot) {
		for (Map.Entry<String, List<Runnable>> entry : this.listeners.entrySet()) {
			if (RedisKeys.slotOf(entry.getKey()) == slot) {
				entry.getValue().forEach(Runnable::run);
			}
		}
	}

	@Override
	public void close() {
		RedisMessageListenerContainer current;
		this.lifecycle.lock();
		try {
			this.closed = true;
			current = this.container;
			this.container = null;
		}
		finally {
			this.lifecycle.unlock();
		}
		if (this.sharded != null) {
			this.sharded.close();
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
