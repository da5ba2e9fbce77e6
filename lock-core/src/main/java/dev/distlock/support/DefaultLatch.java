package dev.distlock.support;

import java.time.Duration;

import dev.distlock.DistributedLatch;
import dev.distlock.LockBackendException;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * A {@link DistributedLatch} handle on one generation of a store's latch. It keeps no
 * state but its generation: every question goes to the store, so handles in different
 * JVMs always agree.
 */
final class DefaultLatch implements DistributedLatch {

	private final LatchStore latches;

	private final String key;

	private final long generation;

	private final int count;

	private final Duration expiry;

	private final Duration recheck;

	private DefaultLatch(LatchStore latches, String key, LatchStore.LatchState state, Duration expiry,
			Duration recheck) {
		this.latches = latches;
		this.key = key;
		this.generation = state.generation();
		this.count = state.count();
		this.expiry = expiry;
		this.recheck = recheck;
	}

	/**
	 * The current generation of {@code key}, armed with {@code count} if there is none.
	 * @param recheck the longest {@link #await} trusts the store's signal before asking
	 * again
	 */
	static DistributedLatch join(LatchStore latches, String key, int count, Duration expiry,
			@Nullable Duration recheck) {
		if (count < 1) {
			throw new IllegalArgumentException("Latch '" + key + "' needs a count of at least 1 but was " + count);
		}
		if (expiry.isNegative() || expiry.isZero()) {
			throw new IllegalArgumentException("Latch '" + key + "' needs a positive expiry but was " + expiry);
		}
		Duration interval = (recheck != null) ? recheck : Duration.ofMillis(100);
		return checked(latches, key, latches.join(key, count, expiry), count, expiry, interval);
	}

	private static DefaultLatch checked(LatchStore latches, String key, LatchStore.LatchState state, int count,
			Duration expiry, Duration recheck) {
		if (state.count() != count) {
			throw new IllegalStateException(
					"Latch '" + key + "' (generation " + state.generation() + ") is armed with a" + " count of "
							+ state.count() + ", not " + count + ": one latch has one count per generation");
		}
		return new DefaultLatch(latches, key, state, expiry, recheck);
	}

	@Override
	public String key() {
		return this.key;
	}

	@Override
	public long generation() {
		return this.generation;
	}

	@Override
	public int count() {
		return this.count;
	}

	@Override
	public CountDown countDown(String participant) {
		if (participant == null || participant.isBlank()) {
			throw new IllegalArgumentException(
					"A participant of latch '" + this.key + "' must be named, but was '" + participant + "'");
		}
		return this.latches.countDown(this.key, this.generation, participant, this.expiry);
	}

	@Override
	public int getCount() {
		LatchStore.LatchState state = this.latches.state(this.key);
		if (state != null && state.generation() == this.generation) {
			return state.remaining();
		}
		opened(state);
		return 0;
	}

	@Override
	public boolean await(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + Math.max(0, timeout.toNanos());
		ThreadWakeup wakeup = new ThreadWakeup();
		ReleaseSignals.Subscription subscription = this.latches.signals().subscribe(this.key, wakeup::signal);
		try {
			while (true) {
				wakeup.signalled = false;
				if (isOpenOrInterrupted()) {
					return true;
				}
				long left = deadline - System.nanoTime();
				if (left <= 0) {
					return false;
				}
				if (!wakeup.park(Math.min(left, this.recheck.toNanos())) || Thread.interrupted()) {
					Thread.interrupted();
					throw new InterruptedException("Interrupted while waiting for latch '" + this.key + "'");
				}
			}
		}
		finally {
			subscription.close();
		}
	}

	/**
	 * {@link #isOpen()}, where a store call cut short by an interrupt is the interrupt.
	 */
	private boolean isOpenOrInterrupted() throws InterruptedException {
		try {
			return isOpen();
		}
		catch (LockBackendException ex) {
			if (Thread.interrupted()) {
				InterruptedException interrupted = new InterruptedException(
						"Interrupted while waiting for latch '" + this.key + "'");
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw ex;
		}
	}

	private boolean isOpen() {
		LatchStore.LatchState state = this.latches.state(this.key);
		if (state != null && state.generation() == this.generation) {
			return state.remaining() == 0;
		}
		return opened(state);
	}

	/**
	 * Whether this handle's generation, no longer the current one, opened.
	 * @throws IllegalStateException if it ended without opening, or nothing is known of
	 * it
	 */
	private boolean opened(LatchStore.@Nullable LatchState state) {
		if (state == null) {
			throw new IllegalStateException("Latch '" + this.key + "' (generation " + this.generation
					+ ") is gone: it expired, untouched for " + this.expiry.toMillis() + "ms");
		}
		if (state.previousGeneration() == this.generation) {
			if (state.previousOpened()) {
				return true;
			}
			throw new IllegalStateException("Latch '" + this.key + "' (generation " + this.generation
					+ ") was re-armed (now generation " + state.generation() + ") before it opened");
		}
		throw new IllegalStateException("Latch '" + this.key + "' (generation " + this.generation
				+ ") is over; the latch is now at generation " + state.generation());
	}

	@Override
	public DistributedLatch rearm(int count) {
		if (count < 1) {
			throw new IllegalArgumentException("Latch '" + this.key + "' needs a count of at least 1 but was " + count);
		}
		return checked(this.latches, this.key, this.latches.rearm(this.key, this.generation, count, this.expiry), count,
				this.expiry, this.recheck);
	}

	@Override
	public String toString() {
		return "DistributedLatch[key=" + this.key + ", generation=" + this.generation + ", count=" + this.count + "]";
	}

}
