package dev.distlock.autoconfigure.ops;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.DistributedLock;
import dev.distlock.OnFailure;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code @DistributedLock(onFailure = SKIP, minHoldTime = ...)} on a job, as on a
 * {@code @Scheduled} method, in two application contexts (two nodes) on one real Redis:
 * the job returns at once, its lock stays in Redis with its lease shortened to what is
 * left of the minimum hold time (not deleted, not the full lease), the other node's run
 * is skipped until then, and runs once it has passed.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class MinHoldTimeRedisTests {

	static final String JOB_KEY = "minhold-nightly-report";

	private final ApplicationContextRunner node = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port())
		.withBean(NightlyJob.class);

	@Test
	void aSecondNodeIsSkippedUntilTheMinimumHoldTimeHasPassed() {
		this.node.run((first) -> this.node.run((second) -> {
			NightlyJob one = first.getBean(NightlyJob.class);
			NightlyJob two = second.getBean(NightlyJob.class);
			long start = System.nanoTime();
			one.run();
			assertThat(one.runs()).isEqualTo(1);
			long ttl = Long.parseLong(RedisServer.shared().command("PTTL", "lock:" + JOB_KEY).substring(1));
			assertThat(ttl).as("the lock's remaining lease in Redis after the job returned, ms")
				.isPositive()
				.isLessThanOrEqualTo(1_500);
			two.run();
			assertThat(two.runs()).as("the other node's run, inside the minimum hold time").isZero();
			Conditions.await("the other node runs the job", Duration.ofSeconds(10), () -> {
				two.run();
				return two.runs() == 1;
			});
			assertThat(System.nanoTime() - start).as("ns before the other node ran")
				.isGreaterThanOrEqualTo(Duration.ofMillis(1_500).toNanos());
			assertThat(one.runs()).isEqualTo(1);
		}));
	}

	static class NightlyJob {

		final AtomicInteger runs = new AtomicInteger();

		@DistributedLock(key = "'minhold-nightly-report'", onFailure = OnFailure.SKIP, waitTime = "0",
				minHoldTime = "1500ms")
		public void run() {
			this.runs.incrementAndGet();
		}

		public int runs() {
			return this.runs.get();
		}

	}

}
