package dev.distlock.autoconfigure.endpoint;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.LockLostEvent;

import org.springframework.context.ApplicationListener;

/**
 * The last few {@link LockLostEvent}s of this JVM, newest first, for the endpoint.
 */
public final class RecentLockLosses implements ApplicationListener<LockLostEvent> {

	/** How many losses are kept. */
	public static final int CAPACITY = 20;

	private final Deque<Loss> losses = new ArrayDeque<>(CAPACITY);

	/** Guards {@link #losses}; no monitors, as everywhere in distlock. */
	private final ReentrantLock lock = new ReentrantLock();

	@Override
	public void onApplicationEvent(LockLostEvent event) {
		Loss loss = new Loss(event.getKey(), event.getFencingToken(), event.getHolderThread(), event.getReason(),
				Instant.ofEpochMilli(event.getTimestamp()));
		this.lock.lock();
		try {
			if (this.losses.size() == CAPACITY) {
				this.losses.removeLast();
			}
			this.losses.addFirst(loss);
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The losses kept, newest first. */
	public List<Loss> losses() {
		this.lock.lock();
		try {
			return new ArrayList<>(this.losses);
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * One lease loss.
	 *
	 * @param key the key as the holder gave it
	 * @param fencingToken the lost lease's token
	 * @param holderThread the thread that held it, or {@code none}
	 * @param reason why it is known lost
	 * @param at when it was found lost
	 */
	public record Loss(String key, long fencingToken, String holderThread, String reason, Instant at) {
	}

}
