package dev.distlock.autoconfigure.leader;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

/**
 * Per election: {@code distlock.leader} (1 while this instance leads, else 0) and
 * {@code distlock.leader.token} (the term's fencing token while it leads, else NaN),
 * tagged with the election's name.
 */
final class LeaderMetrics implements MeterBinder {

	private final LeaderElections elections;

	LeaderMetrics(LeaderElections elections) {
		this.elections = elections;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (LeaderElection election : this.elections.elections()) {
			Gauge.builder("distlock.leader", election, (e) -> e.isLeader() ? 1 : 0)
				.tag("election", election.name())
				.description("Whether this instance leads the election")
				.register(registry);
			Gauge.builder("distlock.leader.token", election, LeaderMetrics::token)
				.tag("election", election.name())
				.description("The fencing token of this instance's current term")
				.register(registry);
		}
	}

	private static double token(LeaderElection election) {
		return election.currentToken().isPresent() ? election.currentToken().getAsLong() : Double.NaN;
	}

}
