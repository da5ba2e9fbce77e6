package dev.distlock.docs;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderOnly;
import dev.distlock.LeaderSettings;
import dev.distlock.LockTemplate;
import dev.distlock.jdbc.JdbcFence;
import dev.distlock.redis.RedisFencedValues;

import org.springframework.scheduling.annotation.Scheduled;

/**
 * The code of {@code docs/leader-election.md}.
 */
class LeaderElectionPage {

	LeaderElections elections;

	// @formatter:off
	@Scheduled(fixedDelay = 10_000)
	@LeaderOnly("dispatcher")
	public void dispatch() { }
	// @formatter:on

	void ask() {
		// @formatter:off
		LeaderElection dispatcher = elections.get("dispatcher");
		if (dispatcher.isLeader()) { dispatcher.name(); }
		dispatcher.currentToken();   // the term's fencing token while this instance leads, else empty
		dispatcher.yield();          // hand the role on: released, and no campaign for yield-backoff
		// @formatter:on
	}

	void withoutSpringBoot(LockTemplate template, LeaderListener listener) {
		// @formatter:off
		LeaderElections elections = new LeaderElections(template, LeaderElections.defaultInstanceId());
		LeaderElection dispatcher = elections.add("dispatcher", LeaderSettings.DEFAULTS, listener);
		elections.start();
		// ...
		elections.close();   // revokes and releases
		// @formatter:on
	}

	class FencedDispatcher {

		RedisFencedValues values;

		JdbcFence fence;

		String cursor;

		// @formatter:off
		@Scheduled(fixedDelay = 10_000)
		@LeaderOnly("dispatcher")
		public void dispatch() {
			long token = elections.get("dispatcher").currentToken().orElseThrow();
			values.set("dispatcher:cursor", cursor, token);                  // RedisFencedValues
			// or, in a transaction: fence.check("dispatcher:cursor", token); // JdbcFence
		}
		// @formatter:on

	}

}
