package dev.distlock.support;

import java.time.Duration;

import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.LockKind;
import dev.distlock.support.handover.HandoverTerms;
import org.jspecify.annotations.Nullable;

/**
 * Fully resolved options for one acquisition: nothing left to configuration.
 */
record LockSettings(Duration waitTime, Duration leaseTime, boolean autoRenew, Duration retryInterval,
		OnLeaseLost onLeaseLost, boolean fair, Duration minHoldTime, @Nullable String name, LockMode mode,
		int permits) implements HandoverTerms {

	static LockSettings of(LockOptions options, LockOptions defaults) {
		LockOptions merged = options.orElse(defaults);
		if (merged.waitTime() == null || merged.leaseTime() == null || merged.autoRenew() == null
				|| merged.retryInterval() == null) {
			throw new IllegalStateException("Default lock options must set every value: " + defaults);
		}
		OnLeaseLost onLeaseLost = (merged.onLeaseLost() != null) ? merged.onLeaseLost() : OnLeaseLost.FAIL_ON_EXIT;
		LockMode mode = (merged.mode() != null) ? merged.mode() : LockMode.WRITE;
		int permits = (merged.permits() != null) ? merged.permits() : 0;
		boolean family = mode == LockMode.READ || permits > 0;
		if (family && Boolean.TRUE.equals(options.fair())) {
			throw new IllegalArgumentException("Fair " + ((permits > 0) ? "semaphores" : "read locks")
					+ " are not offered (" + options + "): fair applies to plain (write) locks");
		}
		// A configured default of fair applies to the locks it can apply to: plain ones.
		boolean fair = !family && Boolean.TRUE.equals(merged.fair());
		return new LockSettings(merged.waitTime(), merged.leaseTime(), merged.autoRenew(), merged.retryInterval(),
				onLeaseLost, fair, (merged.minHoldTime() != null) ? merged.minHoldTime() : Duration.ZERO, merged.name(),
				mode, permits);
	}

	/** The kind of hold this acquisition asks the store for. */
	@Override
	public LockKind kind() {
		if (this.permits > 0) {
			return LockKind.PERMITS;
		}
		if (this.mode == LockMode.READ) {
			return LockKind.SHARED;
		}
		return this.fair ? LockKind.FAIR : LockKind.EXCLUSIVE;
	}

}
