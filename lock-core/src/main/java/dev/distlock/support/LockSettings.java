package dev.distlock.support;

import java.time.Duration;

import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import org.jspecify.annotations.Nullable;

/**
 * Fully resolved options for one acquisition: nothing left to configuration.
 */
record LockSettings(Duration waitTime, Duration leaseTime, boolean autoRenew, Duration retryInterval,
		OnLeaseLost onLeaseLost, boolean fair, Duration minHoldTime, @Nullable String name) {

	static LockSettings of(LockOptions options, LockOptions defaults) {
		LockOptions merged = options.orElse(defaults);
		if (merged.waitTime() == null || merged.leaseTime() == null || merged.autoRenew() == null
				|| merged.retryInterval() == null) {
			throw new IllegalStateException("Default lock options must set every value: " + defaults);
		}
		OnLeaseLost onLeaseLost = (merged.onLeaseLost() != null) ? merged.onLeaseLost() : OnLeaseLost.FAIL_ON_EXIT;
		return new LockSettings(merged.waitTime(), merged.leaseTime(), merged.autoRenew(), merged.retryInterval(),
				onLeaseLost, Boolean.TRUE.equals(merged.fair()),
				(merged.minHoldTime() != null) ? merged.minHoldTime() : Duration.ZERO, merged.name());
	}

}
