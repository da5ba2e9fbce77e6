package dev.distlock.autoconfigure.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the hold observation. Define a bean of this type to replace
 * {@link DefaultLockHoldObservationConvention}.
 */
public interface LockHoldObservationConvention extends ObservationConvention<LockObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof LockObservationContext lock && lock.getKind() == LockObservationContext.Kind.HOLD;
	}

}
