package dev.distlock.harness.fault;

/**
 * One fault class of a store's fault suite: the servers it needs, the faults it injects,
 * and what the checks may expect of it. A store's suite is usually an enum implementing
 * this (the Redis suite's {@code FaultClass}); {@link FaultRun#run} runs one end to end.
 *
 * @param <T> the store's servers of one run
 */
public interface FaultScenario<T extends FaultTarget> {

	/** The name the report's row shows (lower-cased, {@code _} as {@code -}). */
	String name();

	/**
	 * Whether the fault lies inside the supported fault model: there, no two holders may
	 * overlap; outside it, every overlap must be caught by fencing and signalled to the
	 * stale holder as a lease loss.
	 */
	boolean inModel();

	/** Whether the workers acquire with {@code fair(true)}. */
	default boolean fair() {
		return false;
	}

	/**
	 * Whether the fault makes the store fail or time out; where it does not, every
	 * backend error is the library's own and fails the run.
	 */
	default boolean storeFails() {
		return true;
	}

	/**
	 * Whether the store's client keeps its default settings (its own long timeouts), so
	 * that only the provider's {@link dev.distlock.spi.LockProvider#callTimeout() call
	 * timeout} bounds a call; the run then checks that bound on every call. The
	 * {@link ProviderFactory} sees this as {@link FaultRun#CLIENT_DEFAULTS}.
	 */
	default boolean clientDefaults() {
		return false;
	}

	/** Starts the servers of one run. */
	T start();

	/**
	 * Injects faults from the run's seeded schedule until it ends, healing each, and
	 * logging both in {@link FaultSchedule#log()}.
	 */
	void inject(FaultSchedule<T> run);

}
