package dev.distlock.redis;

import java.time.Duration;
import java.util.List;

import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The remaining-lease hint of a busy RedLock acquire is when a quorum could be free, not
 * the longest lease any master reported: a stale key that a minority kept (a fresh
 * clone's five-master contract run saw a 30 s hint for a 2 s lease) must not make waiters
 * sleep past the holder's lease.
 */
class RedLockBusyHintTests {

	@Test
	void aLongStaleKeyOnAMinorityDoesNotStretchTheHint() {
		assertThat(hint(3, busy(2000), busy(2000), busy(2000), busy(2000), busy(30_000)))
			.isEqualTo(Duration.ofMillis(2000));
	}

	@Test
	void mastersThatGrantedOrDidNotAnswerCountAsFree() {
		assertThat(hint(3, 5L, busy(1000), busy(2000), busy(3000), busy(30_000))).isEqualTo(Duration.ofMillis(2000));
		assertThat(hint(3, null, null, busy(2000), busy(2000), busy(30_000))).isEqualTo(Duration.ofMillis(2000));
	}

	@Test
	void theHolderOfAQuorumSetsTheHint() {
		assertThat(hint(2, busy(1500), busy(1500), busy(100))).isEqualTo(Duration.ofMillis(1500));
		assertThat(hint(2, 7L, 8L, 9L)).isEqualTo(Duration.ZERO);
	}

	/** A busy master's reply: the remaining lease in ms, as {@code -remaining - 1}. */
	private static Long busy(long remainingMillis) {
		return -remainingMillis - 1;
	}

	private static Duration hint(int quorum, @Nullable Long... values) {
		RedLockReplies.Tally tally = new RedLockReplies.Tally(values.length, quorum, 0, 0, List.of(), values, List.of(),
				List.of());
		return RedLockProvider.remainingHint(tally, quorum);
	}

}
