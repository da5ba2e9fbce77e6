package dev.distlock.redis;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisCluster;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.harness.redis.RedisVersion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Finding the signal mode of a cluster while one of its masters hangs: the lookup's own
 * thread waits for it (up to the client's command timeout, 60 s by default), and no
 * caller waits for that thread.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class SignalModeDetectionTests {

	private static RedisCluster cluster;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.start(RedisVersion.V7_0, 3);
	}

	@AfterAll
	static void stopCluster() {
		cluster.close();
	}

	/**
	 * The mode is looked up while a master is frozen (SIGSTOP), so its
	 * {@code INFO server} gets no answer: releases meanwhile publish classically at once,
	 * the lookup waiting on a thread of its own (before, the first release itself waited,
	 * for minutes when a node hung). Once the master answers, every release gets the
	 * sharded channel.
	 */
	@Test
	void noReleaseWaitsForTheModeLookupOnAHungNode() throws Exception {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(cluster.addresses()));
		factory.afterPropertiesSet();
		factory.start();
		RedisReleaseSignals signals = new RedisReleaseSignals(factory, new RedisKeys("lock:", true));
		RedisServer hung = cluster.nodes().get(2);
		String key = "lock:detect";
		hung.pause();
		try {
			CompletableFuture<String[]> first = CompletableFuture.supplyAsync(() -> signals.publishArgs(key),
					(task) -> new Thread(task, "first-release").start());
			Conditions.await("the first release returns while the frozen master is asked", Duration.ofSeconds(20),
					first::isDone);
			assertThat(first.get()).containsExactly("lock:released", "0");
			Conditions.await("the lookup asks the frozen master on a thread of its own", Duration.ofSeconds(30),
					SignalModeDetectionTests::lookupWaits);
			assertThat(signals.publishArgs(key)).containsExactly("lock:released", "0");
			hung.resume();
			Conditions.await("the mode is known once the master answers", Duration.ofSeconds(60),
					() -> signals.signalMode() == SignalMode.SHARDED);
			assertThat(signals.publishArgs(key))
				.containsExactly(new RedisKeys("lock:", true).releaseChannel(RedisKeys.slotOf(key)), "1");
		}
		finally {
			hung.resume();
			signals.close();
			factory.destroy();
		}
	}

	private static boolean lookupWaits() {
		return Thread.getAllStackTraces()
			.entrySet()
			.stream()
			.anyMatch((entry) -> entry.getKey().getName().equals("distlock-signal-mode")
					&& waitsInDetection(entry.getKey()));
	}

	private static boolean waitsInDetection(Thread thread) {
		return thread != null && thread.isAlive()
				&& Arrays.stream(thread.getStackTrace())
					.anyMatch((frame) -> frame.getClassName().equals(SignalMode.class.getName())
							&& frame.getMethodName().equals("detect"));
	}

}
