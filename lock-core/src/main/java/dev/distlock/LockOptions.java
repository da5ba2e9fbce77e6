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

	private static final LockOptions DEFAULTS = new LockOptions(null, null, null, null, null, null);

	private final @Nullable Duration waitTime;

	private final @Nullable Duration leaseTime;

	private final @Nullable Boolean autoRenew;

	private final @Nullable Duration retryInterval;

	private final @Nullable OnLeaseLost onLeaseLost;

	private final @Nullable Boolean fair;

	private LockOptions(@Nullable Duration waitTime, @Nullable Duration leaseTime, @Nullable Boolean autoRenew,
			@Nullable Duration retryInterval, @Nullable OnLeaseLost onLeaseLost, @Nullable Boolean fair) {
		this.fair = fair;
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

	/**
	 * What to do when the lease is lost while held, or {@code null} for the configured
	 * choice.
	 */
	/** Whether waiters are served in queue order; null: from configuration. */
	public @Nullable Boolean fair() {
		return this.fair;
	}

	public @Nullable OnLeaseLost onLeaseLost() {
		return this.onLeaseLost;
	}

	/** These options, with every value they leave unset taken from {@code fallback}. */
	public LockOptions orElse(LockOptions fallback) {
		return new LockOptions(first(this.waitTime, fallback.waitTime), first(this.leaseTime, fallback.leaseTime),
				first(this.autoRenew, fallback.autoRenew), first(this.retryInterval, fallback.retryInterval),
				first(this.onLeaseLost, fallback.onLeaseLost), first(this.fair, fallback.fair));
	}

	private static <T> @Nullable T first(@Nullable T value, @Nullable T fallback) {
		return (value != null) ? value : fallback;
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return (other instanceof LockOptions that) && Objects.equals(this.waitTime, that.waitTime)
				&& Objects.equals(this.leaseTime, that.leaseTime) && Objects.equals(this.autoRenew, that.autoRenew)
				&& Objects.equals(this.retryInterval, that.retryInterval) && this.onLeaseLost == that.onLeaseLost
				&& Objects.equals(this.fair, that.fair);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.waitTime, this.leaseTime, this.autoRenew, this.retryInterval, this.onLeaseLost,
				this.fair);
	}

	@Override
	public String toString() {
		return "LockOptions[waitTime=" + this.waitTime + ", leaseTime=" + this.leaseTime + ", autoRenew="
				+ this.autoRenew + ", retryInterval=" + this.retryInterval + ", onLeaseLost=" + this.onLeaseLost
				+ ", fair=" + this.fair + "]";
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

		public LockOptions build() {
			return new LockOptions(this.waitTime, this.leaseTime, this.autoRenew, this.retryInterval, this.onLeaseLost,
					this.fair);
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
