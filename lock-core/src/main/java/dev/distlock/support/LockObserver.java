package dev.distlock.support;

import java.util.List;
import java.util.Locale;

import dev.distlock.Lease;
import org.jspecify.annotations.Nullable;

/**
 * What the machinery tells about its locks, for metrics, traces and test assertions: each
 * acquisition (not a re-entry, which costs nothing), how it ended, how the hold ended,
 * and every lease found lost. The core knows no metrics library; the auto-configuration
 * turns these calls into Micrometer observations and counters, and the test support
 * records them.
 *
 * <p>
 * Calls come from the caller's thread, except {@link #leaseLost}, which comes from
 * whichever thread found the loss (a renewal, the deadline watch). Implementations must
 * be quick, must not block and must not throw: an exception is logged and otherwise
 * ignored. The key is passed for traces and records; a meter must never be tagged with
 * it.
 */
public interface LockObserver {

	/** Observes nothing. */
	LockObserver NONE = new LockObserver() {
	};

	/**
	 * A caller starts to acquire {@code key}.
	 * @param name the lock's name ({@link dev.distlock.LockOptions#name()}), or null
	 * @param fair whether waiters are served in queue order
	 * @return told how the acquisition ends
	 */
	default Acquisition acquiring(String key, @Nullable String name, boolean fair) {
		return Acquisition.NONE;
	}

	/** A held lease was found lost. */
	default void leaseLost(Lease lease, @Nullable String name, LossReason reason) {
	}

	/** All of {@code observers}, in order, as one. */
	static LockObserver composite(List<? extends LockObserver> observers) {
		return (observers.isEmpty()) ? NONE
				: (observers.size() == 1) ? observers.get(0) : new CompositeLockObserver(List.copyOf(observers));
	}

	/** One acquisition. */
	interface Acquisition {

		/** Observes nothing. */
		Acquisition NONE = new Acquisition() {
		};

		/**
		 * The lock was acquired.
		 * @return told how the hold ends
		 */
		default Holding acquired(Lease lease) {
			return Holding.NONE;
		}

		/**
		 * The lock was not acquired.
		 * @param error the exception the caller gets, or null when it gets none (a
		 * {@code tryAcquire} that timed out)
		 */
		default void notAcquired(AcquireOutcome outcome, @Nullable Throwable error) {
		}

	}

	/** One hold, from the acquire to the holder's release. */
	@FunctionalInterface
	interface Holding {

		/** Observes nothing. */
		Holding NONE = (outcome, error) -> {
		};

		/**
		 * The holder released the lease (once, however often it calls release).
		 * @param error what the release threw, or null
		 */
		void ended(HoldOutcome outcome, @Nullable Throwable error);

	}

	/** How an acquisition ended. */
	enum AcquireOutcome {

		/** The lock was acquired. */
		ACQUIRED,

		/** {@code acquire} (or {@code execute}, {@code onFailure = THROW}) timed out. */
		TIMEOUT,

		/**
		 * {@code tryAcquire} (or {@code onFailure = SKIP}) did not get the lock in time.
		 */
		SKIPPED,

		/** The caller was interrupted while waiting. */
		INTERRUPTED,

		/** The store failed, or the call was refused. */
		ERROR;

		/** The value as a tag: lower case, words joined by hyphens. */
		public String tagValue() {
			return LockObserver.tagValue(this);
		}

	}

	/** How a hold ended. */
	enum HoldOutcome {

		/** Released while still held. */
		RELEASED,

		/** The lease had been lost before the release. */
		LEASE_LOST,

		/** The store failed to release it; it expires after its lease. */
		RELEASE_FAILED;

		/** The value as a tag: lower case, words joined by hyphens. */
		public String tagValue() {
			return LockObserver.tagValue(this);
		}

	}

	/** Why a lease was found lost, as a fixed set of values fit for a tag. */
	enum LossReason {

		/** The lease ran out: no renewal confirmed before the deadline, or none due. */
		EXPIRED,

		/** A renewal found the key expired or held by another owner. */
		NOT_OWNER,

		/** The store stayed unreachable until the lease deadline. */
		STORE_UNREACHABLE,

		/** The application shut down while the lease was held. */
		SHUTDOWN,

		/** Any other reason. */
		OTHER;

		/** The value as a tag: lower case, words joined by hyphens. */
		public String tagValue() {
			return LockObserver.tagValue(this);
		}

	}

	private static String tagValue(Enum<?> value) {
		return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
	}

}
