package dev.distlock;

import java.time.Duration;
import java.util.Objects;

/**
 * The timing of one leader election.
 *
 * @param leaseTime how long the role outlives a leader that died: another instance can be
 * granted it this long after the last renewal that the leader sent
 * @param renewDeadline how long after the last confirmed renewal was sent the leader
 * still counts itself leader; shorter than the lease, so that a leader that cannot renew
 * stops before the lease can run out in the store, and longer than a third of it, when
 * the first renewal is due
 * @param retryPeriod how long a candidate waits for the role in one attempt, and pauses
 * after the store failed
 * @param yieldBackoff how long an instance that yielded waits before it campaigns again
 */
public record LeaderSettings(Duration leaseTime, Duration renewDeadline, Duration retryPeriod, Duration yieldBackoff) {

	/**
	 * The defaults: a 15s lease, a 10s renew deadline, 2s retries, a 5s yield back-off.
	 */
	public static final LeaderSettings DEFAULTS = new LeaderSettings(Duration.ofSeconds(15), Duration.ofSeconds(10),
			Duration.ofSeconds(2), Duration.ofSeconds(5));

	/**
	 * @throws IllegalArgumentException if a duration is not positive (the back-off may be
	 * zero), or the renew deadline is not shorter than the lease time and longer than a
	 * third of it
	 */
	public LeaderSettings {
		positive("leaseTime", leaseTime);
		positive("renewDeadline", renewDeadline);
		positive("retryPeriod", retryPeriod);
		Objects.requireNonNull(yieldBackoff, "yieldBackoff must not be null");
		if (yieldBackoff.isNegative()) {
			throw new IllegalArgumentException("yieldBackoff must not be negative but was " + yieldBackoff);
		}
		if (renewDeadline.compareTo(leaseTime) >= 0) {
			throw new IllegalArgumentException("renewDeadline (" + renewDeadline + ") must be shorter than leaseTime ("
					+ leaseTime + "): a leader must stop before its lease" + " can run out in the store");
		}
		if (renewDeadline.compareTo(leaseTime.dividedBy(3)) <= 0) {
			throw new IllegalArgumentException("renewDeadline (" + renewDeadline + ") must be longer than a third of"
					+ " leaseTime (" + leaseTime + "), when the first renewal is due");
		}
	}

	private static void positive(String name, Duration value) {
		Objects.requireNonNull(value, name + " must not be null");
		if (value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(name + " must be positive but was " + value);
		}
	}

}
