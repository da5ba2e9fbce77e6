package dev.distlock.redis;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.IntConsumer;

import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.pubsub.RedisClusterPubSubAdapter;
import io.lettuce.core.cluster.pubsub.StatefulRedisClusterPubSubConnection;
import io.lettuce.core.codec.StringCodec;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Sharded subscriptions ({@code SSUBSCRIBE}) to the release channels of the cluster slots
 * that local waiters wait on, over one Lettuce cluster pub/sub connection, which sends
 * each slot's commands to the node that serves the slot.
 *
 * <p>
 * A slot is counted from the first local subscription to one of its keys and subscribed
 * only once a waiter found one of them busy ({@link #isListening(int)}), so an
 * uncontended lock costs no {@code SSUBSCRIBE}. When the last local subscription of the
 * slot closes, the slot is unsubscribed: the number of subscriptions is bounded by the
 * slots being waited on, never by the number of keys. A slot reports listening only once
 * the server confirmed its subscription; then the slot's waiters are woken once, so that
 * a release between their last attempt and the confirmation is not missed.
 *
 * <p>
 * Commands are handed, in the order decided per slot, to one sender thread: sending can
 * block while Lettuce opens the connection to a node, and a waiter must not wait for
 * that.
 */
final class ShardedSubscriptions implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(ShardedSubscriptions.class);

	private final RedisKeys keys;

	private final IntConsumer onSlotListening;

	private final ConcurrentMap<Integer, Slot> slots = new ConcurrentHashMap<>();

	private final ExecutorService sender = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS,
			new LinkedBlockingQueue<>(), (task) -> {
				Thread thread = new Thread(task, "distlock-sharded-subscribe");
				thread.setDaemon(true);
				return thread;
			});

	private volatile @Nullable StatefulRedisClusterPubSubConnection<String, String> connection;

	/**
	 * @param keys the channel names
	 * @param onSlotListening called with a slot once its subscription is confirmed
	 */
	ShardedSubscriptions(RedisKeys keys, IntConsumer onSlotListening) {
		this.keys = keys;
		this.onSlotListening = onSlotListening;
	}

	/**
	 * Opens the connection (blocking) and passes each release message (a lock key) to
	 * {@code onMessage}. Called once, off the waiters' threads.
	 */
	void connect(RedisClusterClient client, Consumer<String> onMessage) {
		StatefulRedisClusterPubSubConnection<String, String> opened = client.connectPubSub(StringCodec.UTF8);
		opened.addListener(new RedisClusterPubSubAdapter<>() {

			@Override
			public void smessage(RedisClusterNode node, String channel, String message) {
				onMessage.accept(message);
			}

		});
		this.connection = opened;
	}

	/** A local subscription to a key of {@code slot} opened. */
	void retain(int slot) {
		this.slots.compute(slot, (key, current) -> {
			Slot state = (current != null) ? current : new Slot();
			state.subscribers++;
			return state;
		});
	}

	/** A local subscription to a key of {@code slot} closed. */
	void release(int slot) {
		this.slots.computeIfPresent(slot, (key, state) -> {
			if (--state.subscribers > 0) {
				return state;
			}
			StatefulRedisClusterPubSubConnection<String, String> current = this.connection;
			if (state.requested && current != null) {
				send(() -> current.async().sunsubscribe(this.keys.releaseChannel(slot)));
			}
			return null;
		});
	}

	/**
	 * Whether releases in {@code slot} are signalled now. Subscribes the slot on the
	 * first call (and again after a failed attempt); false until the server confirmed it.
	 * A node connection that drops and comes back is subscribed again by Lettuce; a
	 * release in between costs its waiters at most their retry interval.
	 */
	boolean isListening(int slot) {
		StatefulRedisClusterPubSubConnection<String, String> current = this.connection;
		if (current == null) {
			return false;
		}
		boolean[] listening = new boolean[1];
		this.slots.computeIfPresent(slot, (key, state) -> {
			listening[0] = state.confirmed;
			if (!state.requested) {
				state.requested = true;
				String channel = this.keys.releaseChannel(slot);
				send(() -> {
					try {
						current.async()
							.ssubscribe(channel)
							.whenComplete((ignored, failure) -> confirmed(slot, state, failure));
					}
					catch (RuntimeException ex) {
						confirmed(slot, state, ex);
					}
				});
			}
			return state;
		});
		return listening[0];
	}

	private void send(Runnable command) {
		try {
			this.sender.execute(() -> {
				try {
					command.run();
				}
				catch (RuntimeException ex) {
					logger.debug("Could not send a sharded (un)subscribe; waiters poll meanwhile", ex);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// closed
		}
	}

	/**
	 * The answer to a slot's {@code SSUBSCRIBE}, on the client's I/O thread or the
	 * sender's, so not under the map's lock; the fields it sets are volatile.
	 */
	private void confirmed(int slot, Slot state, @Nullable Throwable failure) {
		// A slot that was unsubscribed and subscribed again is a new Slot: an answer to
		// the old SSUBSCRIBE says nothing about it.
		if (this.slots.get(slot) != state) {
			return;
		}
		if (failure != null) {
			// The next waiter that asks sends it again.
			state.requested = false;
			logger.debug("Could not subscribe to release channel " + this.keys.releaseChannel(slot)
					+ "; its waiters poll and ask again", failure);
			return;
		}
		state.confirmed = true;
		this.onSlotListening.accept(slot);
	}

	/**
	 * Whether the connection is open and every slot with a local subscription is
	 * confirmed, so false while a waiter has yet to ask for its slot.
	 */
	boolean isListening() {
		StatefulRedisClusterPubSubConnection<String, String> current = this.connection;
		return current != null && current.isOpen() && this.slots.values().stream().allMatch((state) -> state.confirmed);
	}

	/** Slots subscribed or being subscribed; 0 when nobody waits. */
	int subscribedSlots() {
		return (int) this.slots.values().stream().filter((state) -> state.requested).count();
	}

	@Override
	public void close() {
		StatefulRedisClusterPubSubConnection<String, String> current = this.connection;
		this.connection = null;
		this.sender.shutdownNow();
		if (current != null) {
			try {
				current.closeAsync().get(2, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			catch (Exception ex) {
				logger.debug("Could not close the sharded release subscription", ex);
			}
		}
	}

	/**
	 * Changed under the map's lock for its slot, except for the answer to its
	 * {@code SSUBSCRIBE}.
	 */
	private static final class Slot {

		int subscribers;

		volatile boolean requested;

		volatile boolean confirmed;

	}

}
