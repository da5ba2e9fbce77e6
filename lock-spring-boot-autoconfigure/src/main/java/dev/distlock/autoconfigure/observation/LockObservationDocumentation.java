package dev.distlock.autoconfigure.observation;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The observations of distributed locks. The lock key is only ever a high-cardinality
 * value (it is per-call data such as an order id): it reaches traces, never a meter's
 * tags.
 */
public enum LockObservationDocumentation implements ObservationDocumentation {

	/**
	 * One acquisition, from the call until the lock is acquired or given up. Re-entries
	 * by a holder are not observed: they take no lock.
	 */
	ACQUIRE {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultLockAcquireObservationConvention.class;
		}

	},

	/** One hold, from the acquire until the holder releases the lock. */
	HOLD {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultLockHoldObservationConvention.class;
		}

	};

	@Override
	public KeyName[] getLowCardinalityKeyNames() {
		return LowCardinalityKeyNames.values();
	}

	@Override
	public KeyName[] getHighCardinalityKeyNames() {
		return HighCardinalityKeyNames.values();
	}

	/** Key names of low cardinality: on meters and spans. */
	public enum LowCardinalityKeyNames implements KeyName {

		/** The lock's name (the annotation's {@code name}), or {@code default}. */
		LOCK_NAME {
			@Override
			public String asString() {
				return "lock.name";
			}
		},

		/** Whether waiters are served in queue order. */
		FAIR {
			@Override
			public String asString() {
				return "lock.fair";
			}
		},

		/**
		 * Acquire: acquired, timeout, skipped, interrupted, error. Hold: released,
		 * lease-lost, release-failed.
		 */
		OUTCOME {
			@Override
			public String asString() {
				return "outcome";
			}
		},

		/** The simple class name of the exception the caller got, or {@code none}. */
		EXCEPTION {
			@Override
			public String asString() {
				return "exception";
			}
		}

	}

	/** Key names of high cardinality: on spans only. */
	public enum HighCardinalityKeyNames implements KeyName {

		/** The lock key as the caller gave it. */
		LOCK_KEY {
			@Override
			public String asString() {
				return "lock.key";
			}
		},

		/** The lease's fencing token; 0 when not acquired. */
		FENCING_TOKEN {
			@Override
			public String asString() {
				return "lock.fencing.token";
			}
		}

	}

}
