package dev.distlock.zookeeper;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.UnaryOperator;

import dev.distlock.spi.ReleaseSignals;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * Signals from one persistent watch per watched node and provider, shared by every
 * subscriber of its key: the node's creation, each change of its data and its deletion
 * call every subscriber. The watch is set on the first subscription and removed with the
 * last; once it is set, subscribers are called once, so that a change before it goes
 * unmissed.
 */
final class NodeWatches implements ReleaseSignals {

	private static final Log logger = LogFactory.getLog(NodeWatches.class);

	private final ZookeeperLockProvider provider;

	/** The watched node of a key. */
	private final UnaryOperator<String> pathOf;

	private final Map<String, NodeWatch> watches = new ConcurrentHashMap<>();

	NodeWatches(ZookeeperLockProvider provider, UnaryOperator<String> pathOf) {
		this.provider = provider;
		this.pathOf = pathOf;
	}

	@Override
	public Subscription subscribe(String key, Runnable onChange) {
		NodeWatch watch = this.watches.compute(key, (k, existing) -> {
			NodeWatch current = (existing != null) ? existing : new NodeWatch(key, this.pathOf.apply(key));
			current.listeners.add(onChange);
			return current;
		});
		watch.start();
		return () -> unsubscribe(key, onChange);
	}

	@Override
	public boolean isListening() {
		return this.provider.session().isConnected();
	}

	@Override
	public boolean isListening(String key) {
		NodeWatch watch = this.watches.get(key);
		return isListening() && watch != null && watch.listening;
	}

	private void unsubscribe(String key, Runnable onChange) {
		this.watches.computeIfPresent(key, (k, watch) -> {
			watch.listeners.remove(onChange);
			if (watch.listeners.isEmpty()) {
				watch.stop();
				return null;
			}
			return watch;
		});
	}

	void close() {
		this.watches.values().forEach(NodeWatch::stop);
		this.watches.clear();
	}

	/** One persistent watch on one node. */
	private final class NodeWatch implements Watcher {

		private final String key;

		private final String path;

		final Set<Runnable> listeners = new CopyOnWriteArraySet<>();

		private final AtomicBoolean started = new AtomicBoolean();

		volatile boolean listening;

		NodeWatch(String key, String path) {
			this.key = key;
			this.path = path;
		}

		void start() {
			if (!this.started.compareAndSet(false, true)) {
				return;
			}
			try {
				NodeWatches.this.provider.client()
					.watchers()
					.add()
					.withMode(AddWatchMode.PERSISTENT)
					.inBackground((client, event) -> {
						if (event.getResultCode() == KeeperException.Code.OK.intValue()) {
							this.listening = true;
							this.listeners.forEach(Runnable::run);
						}
						else {
							logger.debug("Could not watch '" + this.key + "' (code " + event.getResultCode()
									+ "); its waiters poll at their retry interval");
						}
					})
					.usingWatcher(this)
					.forPath(this.path);
			}
			catch (Exception ex) {
				logger.debug("Could not watch '" + this.key + "'; its waiters poll", ex);
			}
		}

		void stop() {
			this.listening = false;
			try {
				NodeWatches.this.provider.client().watchers().remove(this).quietly().inBackground().forPath(this.path);
			}
			catch (Exception ex) {
				logger.debug("Could not remove the watch of '" + this.key + "'", ex);
			}
		}

		@Override
		public void process(WatchedEvent event) {
			if (event.getType() != Event.EventType.None) {
				this.listeners.forEach(Runnable::run);
			}
		}

	}

}
