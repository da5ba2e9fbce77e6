package dev.distlock.harness.family;

/**
 * A fault the family checks run under: injected once the workload runs, healed halfway
 * through, so that the workload sees the fault and the recovery. {@link #NONE} is the
 * control run.
 */
public interface FamilyFault {

	/** No fault. */
	FamilyFault NONE = new FamilyFault() {

		@Override
		public void inject() {
		}

		@Override
		public void heal() {
		}

		@Override
		public String toString() {
			return "none";
		}

	};

	/** Starts the fault (a partition, latency, a paused or restarted server...). */
	void inject();

	/** Ends it: the store is reachable as before. */
	void heal();

	/** A named fault from two actions. */
	static FamilyFault of(String name, Runnable inject, Runnable heal) {
		return new FamilyFault() {

			@Override
			public void inject() {
				inject.run();
			}

			@Override
			public void heal() {
				heal.run();
			}

			@Override
			public String toString() {
				return name;
			}

		};
	}

}
