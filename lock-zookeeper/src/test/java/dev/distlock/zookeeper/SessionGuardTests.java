package dev.distlock.zookeeper;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The arithmetic of the session guard's doubt, and the loss message that states it.
 */
class SessionGuardTests {

	@Test
	void theGraceIsAThirdOfTheSessionTimeoutLessTheDriftMargin() {
		assertThat(SessionGuard.driftMarginMillis(40_000)).isEqualTo(402);
		assertThat(SessionGuard.graceMillis(40_000)).isEqualTo(40_000 / 3 - 402).isEqualTo(12_931);
	}

	@Test
	void theLossMessageStatesTheGraceAndHowItWasReached() {
		assertThat(SessionGuard.doubtReason(40_000, 0x1a2bL)).isEqualTo("the connection to ZooKeeper has been"
				+ " suspended for 12931ms (a third of the 40000ms session timeout, 13333ms, less 402ms for clock"
				+ " drift); the client may have heard nothing from the server for two thirds of the session timeout"
				+ " before it noticed, so the server may have expired session 1a2b");
	}

}
