package dev.distlock.zookeeper;

import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;

import org.apache.zookeeper.Watcher;
import org.jspecify.annotations.Nullable;

/**
 * A waiter's place in a key's queue, kept across attempts: its node (once created), the
 * session that owns it, and the one watch it keeps on the node just ahead of it. Guarded
 * by its {@link #lock}, which an attempt on the place holds throughout. A place is used
 * only while it is still kept (mapped, or in its key's {@link WaitingPlaces}), and given
 * up only under its lock, so that no node is created on a place that nobody will delete.
 */
final class QueuedNode {

	final String key;

	/** Held by an attempt on the place, and by whoever gives the place up. */
	final ReentrantLock lock = new ReentrantLock();

	/** Wakes the key's waiters when the node ahead goes away. */
	final Runnable wake;

	@Nullable String path;

	long czxid;

	long sessionId;

	/** Whether the node is a reader's (else a writer's). */
	boolean read;

	/** The node ahead that the watch is on, until it fires. */
	volatile @Nullable String watched;

	/**
	 * The watched node when the last look at the queue found nothing else in the way: its
	 * end lets this place in.
	 */
	volatile @Nullable String lastInTheWay;

	/**
	 * Whether {@link #lastInTheWay} was seen deleted: the next attempt holds without
	 * reading the queue again. Nodes ahead of this one only ever go, never come, since a
	 * node's sequence is above every node already queued.
	 */
	volatile boolean clear;

	/** The lease the node ahead recorded, as a hint for the waiter's pause. */
	long aheadLeaseMillis = 1;

	/** A fair waiter's place lapses if it does not ask again before this fires. */
	@Nullable ScheduledFuture<?> lapse;

	/** Attempts made on this place: a lapse scheduled by an earlier one does nothing. */
	long attempts;

	/**
	 * One watcher per place: ZooKeeper keeps a watcher once per node, however often set.
	 */
	final Watcher watcher;

	QueuedNode(String key, Runnable wake) {
		this.key = key;
		this.wake = wake;
		this.watcher = (event) -> {
			// Deleted, changed, or the session's end: whichever, the waiters look again.
			if (event.getType() == Watcher.Event.EventType.NodeDeleted && event.getPath() != null
					&& event.getPath().equals(this.lastInTheWay)) {
				this.clear = true;
			}
			this.watched = null;
			wake.run();
		};
	}

	/** The place has no node (any more): it watches nothing and is in nobody's way. */
	void forget() {
		this.path = null;
		this.watched = null;
		this.lastInTheWay = null;
		this.clear = false;
	}

}
