package dev.distlock.autoconfigure.observation;

import dev.distlock.autoconfigure.observation.LockObservationDocumentation.HighCardinalityKeyNames;
import dev.distlock.autoconfigure.observation.LockObservationDocumentation.LowCardinalityKeyNames;
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
		return KeyValues.of(
				LowCardinalityKeyNames.LOCK_NAME.withValue(DefaultLockAcquireObservationConvention.lockName(context)),
				LowCardinalityKeyNames.FAIR.withValue(String.valueOf(context.isFair())),
				LowCardinalityKeyNames.OUTCOME
					.withValue((context.getOutcome() != null) ? context.getOutcome() : "unknown"),
				LowCardinalityKeyNames.EXCEPTION.withValue(DefaultLockAcquireObservationConvention.exception(context)));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(LockObservationContext context) {
		return KeyValues.of(HighCardinalityKeyNames.LOCK_KEY.withValue(context.getKey()),
				HighCardinalityKeyNames.FENCING_TOKEN.withValue(String.valueOf(context.getFencingToken())));
	}

}
