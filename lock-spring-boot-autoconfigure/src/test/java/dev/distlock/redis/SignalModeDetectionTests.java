package dev.distlock.redis;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.testsupport.Conditions;
import dev.distlock.testsupport.RedisCluster;
import dev.distlock.testsupport.RedisServer;
import dev.distlock.testsupport.RedisVersion;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Finding the signal mode of a cluster while one of its masters hangs: the thread that
 * asks Redis waits for it (up to the client's command timeout, 60 s by default), but no
 * other thread waits for that thread.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
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
	 * One release finds the mode while a master is frozen (SIGSTOP), so its
	 * {@code INFO server} gets no answer; a second release meanwhile publishes
	 * classically at once instead of queueing behind the first. Once the master answers,
	 * the first release gets the sharded channel, and so does every release after it.
	 */
	@Test
	void aReleaseDoesNotWaitForAnotherThreadsModeDetectionOnAHungNode() throws Exception {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisClusterConfiguration(cluster.addresses()));
		factory.afterPropertiesSet();
		factory.start();
		RedisReleaseSignals signals = new RedisReleaseSignals(factory, new RedisKeys("lock:", true));
		RedisServer hung = cluster.nodes().get(2);
		String key = "lock:detect";
		AtomicReference<Thread> detecting = new AtomicReference<>();
		hung.pause();
		try {
			CompletableFuture<String[]> first = CompletableFuture.supplyAsync(() -> {
				detecting.set(Thread.currentThread());
				return signals.publishArgs(key);
			}, (task) -> new Thread(task, "first-release").start());
			Conditions.await("the first release asks the frozen master", Duration.ofSeconds(30),
					() -> waitsInDetection(detecting.get()));
			CompletableFuture<String[]> second = CompletableFuture.supplyAsync(() -> signals.publishArgs(key),
					(task) -> new Thread(task, "second-release").start());
			Conditions.await("the second release returns while the first waits for the frozen master",
					Duration.ofSeconds(20), second::isDone);
			assertThat(second.get()).containsExactly("lock:released", "0");
			assertThat(waitsInDetection(detecting.get())).as("the first release still waits for the frozen master")
				.isTrue();
			hung.resume();
			assertThat(first.get(60, TimeUnit.SECONDS))
				.containsExactly(new RedisKeys("lock:", true).releaseChannel(RedisKeys.slotOf(key)), "1");
			assertThat(signals.signalMode()).isEqualTo(SignalMode.SHARDED);
			assertThat(signals.publishArgs(key)[1]).isEqualTo("1");
		}
		finally {
			hung.resume();
			signals.close();
			factory.destroy();
		}
	}

	private static boolean waitsInDetection(Thread thread) {
		return thread != null && thread.isAlive()
				&& Arrays.stream(thread.getStackTrace())
					.anyMatch((frame) -> frame.getClassName().equals(SignalMode.class.getName())
							&& frame.getMethodName().equals("detect"));
	}

}
