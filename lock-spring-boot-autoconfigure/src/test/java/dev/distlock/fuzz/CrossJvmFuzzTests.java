package dev.distlock.fuzz;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.redis.RedisProviderFactory;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.ChildJvm;
import dev.distlock.testsupport.RedisResources;
import dev.distlock.testsupport.RedisServer;
import dev.distlock.testsupport.WorkerArgs;
import dev.distlock.testsupport.fuzz.FuzzLoop;
import dev.distlock.testsupport.fuzz.FuzzWorker;
import dev.distlock.testsupport.fuzz.SharedCounter;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion under contention: threads of two templates in this JVM and of a second
 * JVM ({@link FuzzWorker}) do read-pause-write increments of one Redis value
 * ({@link SharedCounter}) under one lock. The final value must equal the number of
 * increments that reported success, and no holder may ever find another inside.
 */
class CrossJvmFuzzTests {

	private static final Duration DURATION = Duration.ofSeconds(6);

	private static final Duration CHILD_TIMEOUT = Duration.ofSeconds(30);

	@Test
	void noIncrementIsLostAndNoHoldersOverlapAcrossThreadsAndJvms() throws Exception {
		try (RedisServer redis = RedisServer.start()) {
			LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(redis.port());
			RenewalScheduler scheduler = new RenewalScheduler();
			Map<String, String> settings = new LinkedHashMap<>(RedisProviderFactory.settings(redis.port()));
			settings.putAll(RedisResources.settings(redis));
			settings.put(WorkerArgs.PROVIDER, RedisProviderFactory.class.getName());
			settings.put(WorkerArgs.RESOURCES, RedisResources.class.getName());
			settings.put(FuzzWorker.THREADS, "3");
			settings.put(FuzzWorker.MILLIS, String.valueOf(DURATION.toMillis()));
			try (ChildJvm worker = ChildJvm.start(FuzzWorker.class, settings);
					SharedCounter store = new RedisResources().sharedCounter(settings)) {
				List<DefaultLockTemplate> templates = List.of(TestRedis.template(connectionFactory, scheduler),
						TestRedis.template(connectionFactory, scheduler));
				templates.get(0).run("fuzz-warm-up", store::read);
				worker.awaitLine("READY", CHILD_TIMEOUT);
				worker.send("GO");
				FuzzLoop.Result local = FuzzLoop.run(templates, store, 4, DURATION);
				FuzzLoop.Result remote = FuzzLoop.Result.parse(worker.awaitLine(FuzzLoop.Result.PREFIX, CHILD_TIMEOUT));
				assertThat(worker.awaitExit(CHILD_TIMEOUT)).isZero();
				String counter = String.valueOf(store.read());
				String summary = "counter=" + counter + ", this JVM: " + local + ", worker JVM: " + remote;
				System.out.println("Fuzz: " + summary);
				assertThat(local.errors() + remote.errors()).as(summary).isZero();
				assertThat(local.lost() + remote.lost()).as(summary).isZero();
				assertThat(local.overlaps() + remote.overlaps()).as(summary).isZero();
				assertThat(local.successes()).as(summary).isPositive();
				assertThat(remote.successes()).as(summary).isPositive();
				assertThat(counter).as(summary).isEqualTo(String.valueOf(local.successes() + remote.successes()));
				assertThat(store.inside()).as(summary).isZero();
			}
			finally {
				scheduler.close();
				connectionFactory.destroy();
			}
		}
	}

}
