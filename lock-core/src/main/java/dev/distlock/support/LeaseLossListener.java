package dev.distlock.support;

import dev.distlock.Lease;
import org.jspecify.annotations.Nullable;

/**
 * Told once when a held lease is found lost, by the thread that found it (a renewal, the
 * deadline watchdog, or a caller of {@link Lease#isHeld()}). The auto-configuration
 * publishes a {@link dev.distlock.LockLostEvent}.
 */
@FunctionalInterface
public interface LeaseLossListener {

	/** Does nothing. */
	LeaseLossListener NONE = (lease, reason, holder) -> {
	};

	/**
	 * @param lease the lost lease
	 * @param reason why it is known lost
	 * @param holder the thread that runs a scope of it (or acquired it and never handed
	 * it on), or null if there is none
	 */
	void leaseLost(Lease lease, String reason, @Nullable Thread holder);

	/**
	 * What the machinery calls: {@link #leaseLost(Lease, String, Thread)} with the reason
	 * also as one of a fixed set of values, for metrics.
	 */
	default void leaseLost(Lease lease, LockObserver.LossReason kind, String reason, @Nullable Thread holder) {
		leaseLost(lease, reason, holder);
	}

}
