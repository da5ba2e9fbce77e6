package dev.distlock.autoconfigure.leader;

import dev.distlock.LeaderElections;

import org.springframework.context.SmartLifecycle;

/**
 * Starts campaigning once the application has started, and on shutdown revokes this
 * instance's roles and releases them, before the locks held at shutdown are released and
 * before the store's connections close.
 */
final class LeaderElectionLifecycle implements SmartLifecycle {

	/** Above the phase in which the locks held at shutdown are released. */
	static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 2048;

	private final LeaderElections elections;

	LeaderElectionLifecycle(LeaderElections elections) {
		this.elections = elections;
	}

	@Override
	public void start() {
		this.elections.start();
	}

	@Override
	public void stop() {
		this.elections.close();
	}

	@Override
	public boolean isRunning() {
		return this.elections.isRunning();
	}

	@Override
	public int getPhase() {
		return PHASE;
	}

}
