package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns {@link DistributedLockProperties} into {@link LockOptions}: the global defaults
 * and one set per named lock. Every value is checked here, so a bad one fails startup
 * naming the property (Boot's failure analyzer prints the property, its value, where it
 * came from, and the rule).
 */
final class LockOptionsResolver {

	private final LockOptions defaults;

	private final Map<String, LockOptions> named;

	LockOptionsResolver(DistributedLockProperties properties) {
		Duration storeTimeout = properties.getStoreTimeout();
		check("distributed-lock.store-timeout", storeTimeout,
				storeTimeout.isNegative() || storeTimeout.isZero() || storeTimeout.toMillis() < 1,
				"must be at least 1ms");
		this.defaults = options("distributed-lock.", properties.getWaitTime(), properties.getLeaseTime(),
				properties.isAutoRenew(), properties.getRetryInterval(), properties.getOnLeaseLost(),
				properties.isFair());
		Map<String, LockOptions> named = new LinkedHashMap<>();
		properties.getLocks()
			.forEach((name, lock) -> named.put(name,
					options("distributed-lock.locks." + name + ".", lock.getWaitTime(), lock.getLeaseTime(),
							lock.getAutoRenew(), lock.getRetryInterval(), lock.getOnLeaseLost(), lock.getFair())));
		this.named = Collections.unmodifiableMap(named);
	}

	/** The global defaults, every value set. */
	LockOptions defaults() {
		return this.defaults;
	}

	/** The option set called {@code name}, or null if none is configured. */
	@Nullable LockOptions named(String name) {
		return this.named.get(name);
	}

	private static LockOptions options(String prefix, @Nullable Duration waitTime, @Nullable Duration leaseTime,
			@Nullable Boolean autoRenew, @Nullable Duration retryInterval, @Nullable OnLeaseLost onLeaseLost,
			@Nullable Boolean fair) {
		LockOptions.Builder builder = LockOptions.builder();
		if (fair != null) {
			builder.fair(fair);
		}
		if (waitTime != null) {
			check(prefix + "wait-time", waitTime, waitTime.isNegative(), "must not be negative");
			builder.waitTime(waitTime);
		}
		if (leaseTime != null) {
			check(prefix + "lease-time", leaseTime, leaseTime.isNegative() || leaseTime.isZero(), "must be positive");
			check(prefix + "lease-time", leaseTime, leaseTime.toMillis() < 1, "must be at least 1ms");
			builder.leaseTime(leaseTime);
		}
		if (autoRenew != null) {
			builder.autoRenew(autoRenew);
		}
		if (retryInterval != null) {
			check(prefix + "retry-interval", retryInterval, retryInterval.isNegative() || retryInterval.isZero(),
					"must be positive");
			builder.retryInterval(retryInterval);
		}
		if (onLeaseLost != null) {
			builder.onLeaseLost(onLeaseLost);
		}
		return builder.build();
	}

	/**
	 * Fails, naming the property, the store and what it lacks, when a configured option
	 * needs a capability the store does not have.
	 */
	void checkSupportedBy(LockProvider provider) {
		String fair = fairProperty();
		if (fair != null) {
			Capabilities.refusal(provider, LockKind.FAIR).ifPresent((reason) -> {
				throw new InvalidConfigurationPropertyValueException(fair, true, reason);
			});
		}
	}

	/**
	 * The property that asks for fair locks ({@code distributed-lock.fair} or
	 * {@code distributed-lock.locks.<name>.fair}), or null if none does.
	 */
	@Nullable String fairProperty() {
		if (Boolean.TRUE.equals(this.defaults.fair())) {
			return "distributed-lock.fair";
		}
		for (Map.Entry<String, LockOptions> entry : this.named.entrySet()) {
			if (Boolean.TRUE.equals(entry.getValue().fair())) {
				return "distributed-lock.locks." + entry.getKey() + ".fair";
			}
		}
		return null;
	}

	static void check(String property, Duration value, boolean invalid, String rule) {
		if (invalid) {
			throw new InvalidConfigurationPropertyValueException(property, value, "The value " + rule + ".");
		}
	}

}
