package dev.distlock.fuzz;

import java.time.Duration;
import java.util.List;

import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.RedisServer;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion under contention: threads of two templates in this JVM and of a second
 * JVM ({@link FuzzWorker}) do read-pause-write increments of one Redis value under one
 * lock. The final value must equal the number of increments that reported success, and no
 * holder may ever find another inside.
 */
class CrossJvmFuzzTests {

	private static final Duration DURATION = Duration.ofSeconds(6);

	private static final Duration CHILD_TIMEOUT = Duration.ofSeconds(30);

	@Test
	void noIncrementIsLostAndNoHoldersOverlapAcrossThreadsAndJvms() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(redis.port());
			RenewalScheduler scheduler = new RenewalScheduler();
			try (ChildJvm worker = ChildJvm.start(FuzzWorker.class, String.valueOf(redis.port()), "3",
					String.valueOf(DURATION.toMillis()))) {
				StringRedisTemplate store = new StringRedisTemplate(connectionFactory);
				List<DefaultLockTemplate> templates = List.of(TestRedis.template(connectionFactory, scheduler),
						TestRedis.template(connectionFactory, scheduler));
				templates.get(0).run("fuzz-warm-up", () -> store.hasKey(FuzzLoop.COUNTER));
				worker.awaitLine("READY", CHILD_TIMEOUT);
				worker.send("GO");
				FuzzLoop.Result local = FuzzLoop.run(templates, store, 4, DURATION);
				FuzzLoop.Result remote = FuzzLoop.Result.parse(worker.awaitLine(FuzzLoop.Result.PREFIX, CHILD_TIMEOUT));
				assertThat(worker.awaitExit(CHILD_TIMEOUT)).isZero();
				String counter = store.opsForValue().get(FuzzLoop.COUNTER);
				String summary = "counter=" + counter + ", this JVM: " + local + ", worker JVM: " + remote;
				System.out.println("Fuzz: " + summary);
				assertThat(local.errors() + remote.errors()).as(summary).isZero();
				assertThat(local.lost() + remote.lost()).as(summary).isZero();
				assertThat(local.overlaps() + remote.overlaps()).as(summary).isZero();
				assertThat(local.successes()).as(summary).isPositive();
				assertThat(remote.successes()).as(summary).isPositive();
				assertThat(counter).as(summary).isEqualTo(String.valueOf(local.successes() + remote.successes()));
				assertThat(store.opsForValue().get(FuzzLoop.INSIDE)).as(summary).isEqualTo("0");
			}
			finally {
				scheduler.close();
				connectionFactory.destroy();
			}
		}
	}

}
