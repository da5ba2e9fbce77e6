package dev.distlock.autoconfigure.endpoint;

import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

import dev.distlock.LockLostEvent;

import org.springframework.context.ApplicationListener;

/**
 * The last few {@link LockLostEvent}s of this JVM, newest first, for the endpoint.
 */
public final class RecentLockLosses implements ApplicationListener<LockLostEvent> {

	/** How many losses are kept. */
	public static final int CAPACITY = 20;

	private final Deque<Loss> losses = new ArrayDeque<>(CAPACITY);

	@Override
	public void onApplicationEvent(LockLostEvent event) {
		Loss loss = new Loss(event.getKey(), event.getFencingToken(), event.getHolderThread(), event.getReason(),
				Instant.ofEpochMilli(event.getTimestamp()));
		synchronized (this.losses) {
			if (this.losses.size() == CAPACITY) {
				this.losses.removeLast();
			}
			this.losses.addFirst(loss);
		}
	}

	/** The losses kept, newest first. */
	public List<Loss> losses() {
		synchronized (this.losses) {
			return new ArrayList<>(this.losses);
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
