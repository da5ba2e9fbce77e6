package dev.distlock.autoconfigure.observation;

import dev.distlock.autoconfigure.observation.LockObservationDocumentation.HighCardinalityKeyNames;
import dev.distlock.autoconfigure.observation.LockObservationDocumentation.LowCardinalityKeyNames;
import io.micrometer.common.KeyValues;

/**
 * The default {@link LockAcquireObservationConvention}: observation
 * {@code distributed.lock.acquire}; low cardinality {@code lock.name} ({@code default}
 * when the lock has none), {@code lock.fair}, {@code outcome} (acquired, timeout,
 * skipped, interrupted, error), {@code exception} ({@code none} or the exception's simple
 * class name); high cardinality {@code lock.key} and {@code lock.fencing.token}.
 */
public class DefaultLockAcquireObservationConvention implements LockAcquireObservationConvention {

	/** The observation's name, and so its timer's. */
	public static final String NAME = "distributed.lock.acquire";

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(LockObservationContext context) {
		return "lock acquire";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(LockObservationContext context) {
		return lowCardinality(context);
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(LockObservationContext context) {
		return highCardinality(context);
	}

	/** The low-cardinality key values of both lock observations. */
	static KeyValues lowCardinality(LockObservationContext context) {
		return KeyValues.of(LowCardinalityKeyNames.LOCK_NAME.withValue(lockName(context)),
				LowCardinalityKeyNames.FAIR.withValue(String.valueOf(context.isFair())),
				LowCardinalityKeyNames.OUTCOME
					.withValue((context.getOutcome() != null) ? context.getOutcome() : "unknown"),
				LowCardinalityKeyNames.EXCEPTION.withValue(exception(context)));
	}

	/** The high-cardinality key values of both lock observations. */
	static KeyValues highCardinality(LockObservationContext context) {
		return KeyValues.of(HighCardinalityKeyNames.LOCK_KEY.withValue(context.getKey()),
				HighCardinalityKeyNames.FENCING_TOKEN.withValue(String.valueOf(context.getFencingToken())));
	}

	private static String lockName(LockObservationContext context) {
		return (context.getLockName() != null) ? context.getLockName() : "default";
	}

	private static String exception(LockObservationContext context) {
		return (context.getError() != null) ? context.getError().getClass().getSimpleName() : "none";
	}

}
