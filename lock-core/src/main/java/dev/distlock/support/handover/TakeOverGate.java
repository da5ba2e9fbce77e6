package dev.distlock.support.handover;

/**
 * Passed by a thread about to take over a lock left for its line, before it looks at the
 * run. A template passes {@link #OPEN}; a test that orders a take-over after an owner
 * check holds the thread here.
 */
@FunctionalInterface
public interface TakeOverGate {

	/** Passes at once. */
	TakeOverGate OPEN = (key) -> {
	};

	void pass(String key);

}
