package dev.distlock.autoconfigure.observation;

import io.micrometer.common.KeyValues;

/**
 * The default {@link LockHoldObservationConvention}: observation
 * {@code distributed.lock.hold}, from the acquire until the holder's release; low
 * cardinality {@code lock.name}, {@code lock.fair}, {@code outcome} (released,
 * lease-lost, release-failed), {@code exception}; high cardinality {@code lock.key} and
 * {@code lock.fencing.token}.
 */
public class DefaultLockHoldObservationConvention implements LockHoldObservationConvention {

	/** The observation's name, and so its timer's. */
	public static final String NAME = "distributed.lock.hold";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(LockObservationContext context) {
		return "lock hold";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(LockObservationContext context) {
		return DefaultLockAcquireObservationConvention.lowCardinality(context);
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(LockObservationContext context) {
		return DefaultLockAcquireObservationConvention.highCardinality(context);
	}

}
