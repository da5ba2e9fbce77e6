package dev.distlock.autoconfigure.leader;

import java.time.Duration;

import dev.distlock.LeaderSettings;

import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;

/**
 * Turns one configured election into {@link LeaderSettings}, refusing bad timings at
 * startup with the property's name.
 */
final class LeaderSettingsResolver {

	private LeaderSettingsResolver() {
	}

	static LeaderSettings resolve(String name, DistributedLockLeaderProperties.Election election) {
		String prefix = "distributed-lock.leader.elections." + name + ".";
		positive(prefix + "lease-time", election.getLeaseTime());
		positive(prefix + "renew-deadline", election.getRenewDeadline());
		positive(prefix + "retry-period", election.getRetryPeriod());
		if (election.getYieldBackoff().isNegative()) {
			throw new InvalidConfigurationPropertyValueException(prefix + "yield-backoff", election.getYieldBackoff(),
					"It must not be negative.");
		}
		if (election.getRenewDeadline().compareTo(election.getLeaseTime()) >= 0) {
			throw new InvalidConfigurationPropertyValueException(prefix + "renew-deadline", election.getRenewDeadline(),
					"It must be shorter than " + prefix + "lease-time (" + election.getLeaseTime()
							+ "), so that a leader that cannot renew stops before"
							+ " another instance can take the role.");
		}
		if (election.getRenewDeadline().compareTo(election.getLeaseTime().dividedBy(3)) <= 0) {
			throw new InvalidConfigurationPropertyValueException(prefix + "renew-deadline", election.getRenewDeadline(),
					"It must be longer than a third of " + prefix + "lease-time (" + election.getLeaseTime()
							+ "), when the first renewal is due.");
		}
		return new LeaderSettings(election.getLeaseTime(), election.getRenewDeadline(), election.getRetryPeriod(),
				election.getYieldBackoff());
	}

	private static void positive(String property, Duration value) {
		if (value.isNegative() || value.isZero()) {
			throw new InvalidConfigurationPropertyValueException(property, value, "It must be positive.");
		}
	}

}
