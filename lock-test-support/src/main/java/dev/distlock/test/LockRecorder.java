package dev.distlock.test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.distlock.Lease;
import dev.distlock.support.LockObserver;
import org.jspecify.annotations.Nullable;

/**
 * Records every lock acquisition, hold and loss of a template, so that a test can assert
 * that code ran under a lock and with which key. As a bean (for example through
 * {@link AutoConfigureInMemoryLocks}), the auto-configuration tells it of every
 * {@code @DistributedLock} call and {@code LockTemplate} call; re-entries are not
 * recorded, since they take no lock.
 *
 * <pre>
 * &#64;SpringBootTest
 * &#64;AutoConfigureInMemoryLocks
 * class OrderServiceTests {
 *
 *     &#64;Autowired OrderService orders;
 *     &#64;Autowired LockRecorder locks;
 *
 *     &#64;Test
 *     void shipsUnderTheOrdersLock() {
 *         orders.ship(42);
 *         locks.assertAcquired("order:42");
 *     }
 * }
 * </pre>
 *
 * Thread-safe; keeps everything until {@link #clear()}.
 */
public class LockRecorder implements LockObserver {

	private final List<Acquisition> acquisitions = new CopyOnWriteArrayList<>();

	private final List<Loss> losses = new CopyOnWriteArrayList<>();

	@Override
	public LockObserver.Acquisition acquiring(String key, @Nullable String name, boolean fair) {
		String thread = Thread.currentThread().getName();
		return new LockObserver.Acquisition() {

			@Override
			public Holding acquired(Lease lease) {
				Acquisition acquired = new Acquisition(key, name, fair, AcquireOutcome.ACQUIRED, lease.fencingToken(),
						thread);
				LockRecorder.this.acquisitions.add(acquired);
				return (outcome, error) -> acquired.holdOutcome = outcome;
			}

			@Override
			public void notAcquired(AcquireOutcome outcome, @Nullable Throwable error) {
				LockRecorder.this.acquisitions.add(new Acquisition(key, name, fair, outcome, 0, thread));
			}

		};
	}

	@Override
	public void leaseLost(Lease lease, @Nullable String name, LossReason reason) {
		this.losses.add(new Loss(lease.key(), name, reason));
	}

	/** Every acquisition so far, in the order they ended, acquired or not. */
	public List<Acquisition> acquisitions() {
		return List.copyOf(this.acquisitions);
	}

	/** The keys acquired so far, in order, with repeats. */
	public List<String> acquiredKeys() {
		List<String> keys = new ArrayList<>();
		for (Acquisition acquisition : this.acquisitions) {
			if (acquisition.outcome() == AcquireOutcome.ACQUIRED) {
				keys.add(acquisition.key());
			}
		}
		return keys;
	}

	/** Every lease found lost so far. */
	public List<Loss> losses() {
		return List.copyOf(this.losses);
	}

	/**
	 * Fails unless a lock on {@code key} was acquired (since the last {@link #clear()}).
	 */
	public Acquisition assertAcquired(String key) {
		for (Acquisition acquisition : this.acquisitions) {
			if (acquisition.outcome() == AcquireOutcome.ACQUIRED && acquisition.key().equals(key)) {
				return acquisition;
			}
		}
		throw new AssertionError(
				"Expected a lock on key '" + key + "' to have been acquired, but the keys acquired were "
						+ acquiredKeys() + " (all acquisitions: " + this.acquisitions + ")");
	}

	/** Fails unless exactly {@code keys} were acquired, in this order. */
	public void assertAcquiredExactly(String... keys) {
		if (!acquiredKeys().equals(List.of(keys))) {
			throw new AssertionError(
					"Expected the locks acquired to be " + List.of(keys) + " but they were " + acquiredKeys());
		}
	}

	/** Fails if any lock was acquired. */
	public void assertNoneAcquired() {
		if (!acquiredKeys().isEmpty()) {
			throw new AssertionError("Expected no lock to have been acquired, but these were: " + acquiredKeys());
		}
	}

	/** Fails unless every lock acquired has been released again. */
	public void assertAllReleased() {
		for (Acquisition acquisition : this.acquisitions) {
			if (acquisition.outcome() == AcquireOutcome.ACQUIRED && acquisition.holdOutcome() == null) {
				throw new AssertionError("Lock on key '" + acquisition.key() + "' (fencing token "
						+ acquisition.fencingToken() + ", acquired by " + acquisition.thread() + ") is still held");
			}
		}
	}

	/** Forgets everything recorded so far. */
	public void clear() {
		this.acquisitions.clear();
		this.losses.clear();
	}

	/**
	 * One acquisition: how it ended and, once the lock is released, how the hold ended.
	 */
	public static final class Acquisition {

		private final String key;

		private final @Nullable String name;

		private final boolean fair;

		private final AcquireOutcome outcome;

		private final long fencingToken;

		private final String thread;

		private volatile @Nullable HoldOutcome holdOutcome;

		Acquisition(String key, @Nullable String name, boolean fair, AcquireOutcome outcome, long fencingToken,
				String thread) {
			this.key = key;
			this.name = name;
			this.fair = fair;
			this.outcome = outcome;
			this.fencingToken = fencingToken;
			this.thread = thread;
		}

		/** The key as the caller gave it. */
		public String key() {
			return this.key;
		}

		/** The lock's name (the annotation's {@code name}), or null. */
		public @Nullable String name() {
			return this.name;
		}

		/** Whether a fair lock was asked for. */
		public boolean fair() {
			return this.fair;
		}

		/** Acquired, or why not. */
		public AcquireOutcome outcome() {
			return this.outcome;
		}

		/** The lease's fencing token; 0 when not acquired. */
		public long fencingToken() {
			return this.fencingToken;
		}

		/** The name of the thread that asked. */
		public String thread() {
			return this.thread;
		}

		/** How the hold ended, or null while it is still held (or was never acquired). */
		public @Nullable HoldOutcome holdOutcome() {
			return this.holdOutcome;
		}

		@Override
		public String toString() {
			return "Acquisition[key=" + this.key + ", name=" + this.name + ", outcome=" + this.outcome
					+ ", fencingToken=" + this.fencingToken + ", thread=" + this.thread + ", hold=" + this.holdOutcome
					+ "]";
		}

	}

	/**
	 * A lease found lost.
	 *
	 * @param key the key as the caller gave it
	 * @param name the lock's name, or null
	 * @param reason why it was lost
	 */
	public record Loss(String key, @Nullable String name, LossReason reason) {
	}

}
