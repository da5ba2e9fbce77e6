package dev.distlock.autoconfigure.observation;

import dev.distlock.Lease;
import dev.distlock.support.LockObserver;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Turns what the machinery tells of each lock into two Micrometer observations: one per
 * acquisition ({@link LockObservationDocumentation#ACQUIRE}) and one per hold
 * ({@link LockObservationDocumentation#HOLD}), each with its outcome. The hold
 * observation is started when the lock is acquired and stopped when the holder releases
 * it, whichever thread that is; it is not opened as the current scope.
 */
public final class ObservationLockObserver implements LockObserver {

	private static final DefaultLockAcquireObservationConvention DEFAULT_ACQUIRE = new DefaultLockAcquireObservationConvention();

	private static final DefaultLockHoldObservationConvention DEFAULT_HOLD = new DefaultLockHoldObservationConvention();

	private final ObservationRegistry registry;

	private final @Nullable LockAcquireObservationConvention acquireConvention;

	private final @Nullable LockHoldObservationConvention holdConvention;

	/**
	 * @param acquireConvention replaces the default acquire convention, or null
	 * @param holdConvention replaces the default hold convention, or null
	 */
	public ObservationLockObserver(ObservationRegistry registry,
			@Nullable LockAcquireObservationConvention acquireConvention,
			@Nullable LockHoldObservationConvention holdConvention) {
		this.registry = registry;
		this.acquireConvention = acquireConvention;
		this.holdConvention = holdConvention;
	}

	@Override
	public Acquisition acquiring(String key, @Nullable String name, boolean fair) {
		LockObservationContext context = new LockObservationContext(LockObservationContext.Kind.ACQUIRE, key, name,
				fair);
		Observation observation = LockObservationDocumentation.ACQUIRE
			.observation(this.acquireConvention, DEFAULT_ACQUIRE, () -> context, this.registry)
			.start();
		return new Acquisition() {

			@Override
			public Holding acquired(Lease lease) {
				context.setFencingToken(lease.fencingToken());
				context.setOutcome(AcquireOutcome.ACQUIRED.tagValue());
				observation.stop();
				return hold(key, name, fair, lease.fencingToken());
			}

			@Override
			public void notAcquired(AcquireOutcome outcome, @Nullable Throwable error) {
				context.setOutcome(outcome.tagValue());
				if (error != null) {
					observation.error(error);
				}
				observation.stop();
			}

		};
	}

	private Holding hold(String key, @Nullable String name, boolean fair, long fencingToken) {
		LockObservationContext context = new LockObservationContext(LockObservationContext.Kind.HOLD, key, name, fair);
		context.setFencingToken(fencingToken);
		Observation observation = LockObservationDocumentation.HOLD
			.observation(this.holdConvention, DEFAULT_HOLD, () -> context, this.registry)
			.start();
		return (outcome, error) -> {
			context.setOutcome(outcome.tagValue());
			if (error != null) {
				observation.error(error);
			}
			observation.stop();
		};
	}

}
