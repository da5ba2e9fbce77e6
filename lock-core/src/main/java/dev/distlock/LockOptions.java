package dev.distlock;

import java.time.Duration;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * Per-call lock options. Each value left unset is taken from configuration
 * ({@code distributed-lock.*}).
 *
 * <pre>
 * LockOptions.builder().waitTime(Duration.ofSeconds(2)).leaseTime(Duration.ofSeconds(10)).build()
 * </pre>
 */
public final class LockOptions {

	private static final LockOptions DEFAULTS = new LockOptions(null, null, null, null, null, null, null, null, null,
			null);

	private final @Nullable Duration waitTime;

	private final @Nullable Duration leaseTime;

	private final @Nullable Boolean autoRenew;

	private final @Nullable Duration retryInterval;

	private final @Nullable OnLeaseLost onLeaseLost;

	private final @Nullable Boolean fair;

	private final @Nullable Duration minHoldTime;

	private final @Nullable String name;

	private final @Nullable LockMode mode;

	private final @Nullable Integer permits;

	private LockOptions(@Nullable Duration waitTime, @Nullable Duration leaseTime, @Nullable Boolean autoRenew,
			@Nullable Duration retryInterval, @Nullable OnLeaseLost onLeaseLost, @Nullable Boolean fair,
			@Nullable Duration minHoldTime, @Nullable String name, @Nullable LockMode mode, @Nullable Integer permits) {
		this.mode = mode;
		this.permits = permits;
		this.fair = fair;
		this.minHoldTime = minHoldTime;
		this.name = name;
		this.waitTime = waitTime;
		this.leaseTime = leaseTime;
		this.autoRenew = autoRenew;
		this.retryInterval = retryInterval;
		this.onLeaseLost = onLeaseLost;
	}

	/** Options that take every value from configuration. */
	public static LockOptions defaults() {
		return DEFAULTS;
	}

	public static Builder builder() {
		return new Builder();
	}

	/** The wait time, or {@code null} for the configured one. */
	public @Nullable Duration waitTime() {
		return this.waitTime;
	}

	/** The lease time, or {@code null} for the configured one. */
	public @Nullable Duration leaseTime() {
		return this.leaseTime;
	}

	/**
	 * Whether to renew the lease in the background, or {@code null} for the configured
	 * choice.
	 */
	public @Nullable Boolean autoRenew() {
		return this.autoRenew;
	}

	/**
	 * The fallback poll interval while waiting, or {@code null} for the configured one.
	 */
	public @Nullable Duration retryInterval() {
		return this.retryInterval;
	}

	/** Whether waiters are served in queue order; null: from configuration. */
	public @Nullable Boolean fair() {
		return this.fair;
	}

	/**
	 * What to do when the lease is lost while held, or {@code null} for the configured
	 * choice.
	 */
	public @Nullable OnLeaseLost onLeaseLost() {
		return this.onLeaseLost;
	}

	/**
	 * The least time the lock stays taken, counted from the acquire, however early the
	 * holder releases it; {@code null} or zero: none.
	 */
	public @Nullable Duration minHoldTime() {
		return this.minHoldTime;
	}

	/**
	 * The lock's name for metrics, traces and the Actuator endpoint (the annotation's
	 * {@code name}), or {@code null} for none. Never the key: a name is one of a few
	 * fixed labels, a key is per-call data.
	 */
	public @Nullable String name() {
		return this.name;
	}

	/**
	 * The side of the key's read-write lock to take, or {@code null} for
	 * {@link LockMode#WRITE} (a plain lock is the writer's side).
	 */
	public @Nullable LockMode mode() {
		return this.mode;
	}

	/**
	 * The number of permits of the semaphore to take one permit of, or {@code null} (and
	 * zero) for a lock, not a semaphore.
	 */
	public @Nullable Integer permits() {
		return this.permits;
	}

	/** These options, with every value they leave unset taken from {@code fallback}. */
	public LockOptions orElse(LockOptions fallback) {
		return new LockOptions(first(this.waitTime, fallback.waitTime), first(this.leaseTime, fallback.leaseTime),
				first(this.autoRenew, fallback.autoRenew), first(this.retryInterval, fallback.retryInterval),
				first(this.onLeaseLost, fallback.onLeaseLost), first(this.fair, fallback.fair),
				first(this.minHoldTime, fallback.minHoldTime), first(this.name, fallback.name),
				first(this.mode, fallback.mode), first(this.permits, fallback.permits));
	}

	private static <T> @Nullable T first(@Nullable T value, @Nullable T fallback) {
		return (value != null) ? value : fallback;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (other instanceof LockOptions that) && Objects.equals(this.waitTime, that.waitTime)
				&& Objects.equals(this.leaseTime, that.leaseTime) && Objects.equals(this.autoRenew, that.autoRenew)
				&& Objects.equals(this.retryInterval, that.retryInterval) && this.onLeaseLost == that.onLeaseLost
				&& Objects.equals(this.fair, that.fair) && Objects.equals(this.minHoldTime, that.minHoldTime)
				&& Objects.equals(this.name, that.name) && this.mode == that.mode
				&& Objects.equals(this.permits, that.permits);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.waitTime, this.leaseTime, this.autoRenew, this.retryInterval, this.onLeaseLost,
				this.fair, this.minHoldTime, this.name, this.mode, this.permits);
	}

	@Override
	public String toString() {
		return "LockOptions[waitTime=" + this.waitTime + ", leaseTime=" + this.leaseTime + ", autoRenew="
				+ this.autoRenew + ", retryInterval=" + this.retryInterval + ", onLeaseLost=" + this.onLeaseLost
				+ ", fair=" + this.fair + ", minHoldTime=" + this.minHoldTime + ", name=" + this.name + ", mode="
				+ this.mode + ", permits=" + this.permits + "]";
	}

	/**
	 * Builds {@link LockOptions}; values are checked when set.
	 */
	public static final class Builder {

		private @Nullable Duration waitTime;

		private @Nullable Duration leaseTime;

		private @Nullable Boolean autoRenew;

		private @Nullable Duration retryInterval;

		private @Nullable OnLeaseLost onLeaseLost;

		private @Nullable Boolean fair;

		private @Nullable Duration minHoldTime;

		private @Nullable String name;

		private @Nullable LockMode mode;

		private @Nullable Integer permits;

		private Builder() {
		}

		/** How long to wait for the lock; zero tries once. Must not be negative. */
		public Builder waitTime(Duration waitTime) {
			this.waitTime = check("waitTime", waitTime, true);
			return this;
		}

		/** How long the lock outlives a crashed holder. Must be positive. */
		public Builder leaseTime(Duration leaseTime) {
			this.leaseTime = check("leaseTime", leaseTime, false);
			return this;
		}

		/** Whether to renew the lease in the background while held. */
		public Builder autoRenew(boolean autoRenew) {
			this.autoRenew = autoRenew;
			return this;
		}

		/** The fallback poll interval while waiting. Must be positive. */
		public Builder retryInterval(Duration retryInterval) {
			this.retryInterval = check("retryInterval", retryInterval, false);
			return this;
		}

		/**
		 * What to do, besides the event and the log, when the lease is lost while held.
		 */
		public Builder onLeaseLost(OnLeaseLost onLeaseLost) {
			this.onLeaseLost = Objects.requireNonNull(onLeaseLost, "onLeaseLost must not be null");
			return this;
		}

		/**
		 * Whether waiters take the lock in the order they queued for it (a queue in
		 * Redis), rather than whoever asks first after a release.
		 */
		public Builder fair(boolean fair) {
			this.fair = fair;
			return this;
		}

		/**
		 * Keeps the lock taken for at least this long after it was acquired, even when
		 * the holder releases it sooner: a release before then shortens the lease to what
		 * is left (an owner-checked expiry in the store) instead of deleting the lock, so
		 * no thread waits for it. For scheduled jobs with {@code onFailure = SKIP}:
		 * another node whose clock is a little behind finds the lock still taken and
		 * skips the run that this node has already done. Zero: none. Must not be
		 * negative.
		 */
		public Builder minHoldTime(Duration minHoldTime) {
			this.minHoldTime = check("minHoldTime", minHoldTime, true);
			return this;
		}

		/**
		 * A name for the lock in metrics, traces and the Actuator endpoint: one of a few
		 * fixed labels (such as the annotation's {@code name}), never per-call data such
		 * as the key. Must not be blank.
		 */
		public Builder name(String name) {
			Objects.requireNonNull(name, "name must not be null");
			if (name.isBlank()) {
				throw new IllegalArgumentException("name must not be blank");
			}
			this.name = name;
			return this;
		}

		/**
		 * Takes the read or the write side of the key's read-write lock; the default,
		 * {@link LockMode#WRITE}, is the plain lock. See {@link LockMode} for re-entry (a
		 * reader asking for the write side is an error).
		 */
		public Builder mode(LockMode mode) {
			this.mode = Objects.requireNonNull(mode, "mode must not be null");
			return this;
		}

		/**
		 * Takes one permit of the semaphore {@code key} that admits {@code permits}
		 * holders at once, instead of a lock. Each permit is a lease of its own (renewed,
		 * with its own fencing token, lost loudly) that expires only when its holder dies
		 * or stops renewing it. Semaphores live apart from locks: a semaphore and a lock
		 * of the same key are unrelated. Every caller of one semaphore must declare the
		 * same count ({@link PermitCountMismatchException} otherwise). Zero: not a
		 * semaphore. Must not be negative; cannot be combined with {@link LockMode#READ}
		 * or {@code fair}.
		 */
		public Builder permits(int permits) {
			if (permits < 0) {
				throw new IllegalArgumentException(
						"permits must be zero (no semaphore) or positive but was " + permits);
			}
			this.permits = permits;
			return this;
		}

		/**
		 * @throws IllegalArgumentException if the options ask for a read lock and a
		 * semaphore at once
		 */
		public LockOptions build() {
			if (this.permits != null && this.permits > 0 && this.mode == LockMode.READ) {
				throw new IllegalArgumentException(
						"permits = " + this.permits + " with mode READ: a semaphore has no read side");
			}
			return new LockOptions(this.waitTime, this.leaseTime, this.autoRenew, this.retryInterval, this.onLeaseLost,
					this.fair, this.minHoldTime, this.name, this.mode, this.permits);
		}

		private static Duration check(String name, Duration value, boolean zeroAllowed) {
			Objects.requireNonNull(value, name + " must not be null");
			if (value.isNegative() || (!zeroAllowed && value.isZero())) {
				throw new IllegalArgumentException(
						name + " must be " + (zeroAllowed ? "zero or positive" : "positive") + " but was " + value);
			}
			return value;
		}

	}

}
