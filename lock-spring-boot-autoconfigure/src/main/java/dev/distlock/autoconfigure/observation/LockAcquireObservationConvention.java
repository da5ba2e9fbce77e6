package dev.distlock.autoconfigure.observation;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names and key values of the acquire observation. Define a bean of this type to replace
 * {@link DefaultLockAcquireObservationConvention}, for example extending it to add a key
 * value.
 */
public interface LockAcquireObservationConvention extends ObservationConvention<LockObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof LockObservationContext lock && lock.getKind() == LockObservationContext.Kind.ACQUIRE;
	}

}
