package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisCluster;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.harness.redis.RedisVersion;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Release signals on real three-master clusters: sharded pub/sub on Redis 7.0
 * ({@code SPUBLISH} from the release script, {@code SSUBSCRIBE} per waited slot, nothing
 * left subscribed after the wait) and the classic fallback on Redis 6.2. The retry
 * interval is 2 s, so a waiter that takes the lock within 1 s of the release was woken by
 * the signal, not by its retry.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class ShardedReleaseSignalsTests {

	private static final Duration RETRY = Duration.ofSeconds(2);

	private static RedisCluster cluster7;

	@BeforeAll
	static void startCluster() {
		cluster7 = RedisCluster.start(RedisVersion.V7_0, 3);
	}

	@AfterAll
	static void stopCluster() {
		cluster7.close();
	}

	@Test
	void onRedis7AWaiterIsWokenBySpublishOnItsSlotAndUnsubscribesAfterTheWait() throws Exception {
		assertThat(cluster7.nodes()).allSatisfy((node) -> assertThat(node.version()).startsWith("7."));
		try (Providers providers = new Providers(cluster7)) {
			String key = "sharded-" + UUID.randomUUID();
			long waitedMillis = handOff(cluster7, providers, key);
			assertThat(providers.waiting.isShardedPubSub()).isTrue();
			assertThat(waitedMillis)
				.as("ms from release to the waiter holding the lock (retry interval %d ms)", RETRY.toMillis())
				.isLessThan(RETRY.toMillis() / 2);
			await("no sharded subscription is left after the wait",
					() -> providers.waiting.subscribedSlots() == 0 && shardChannels(cluster7) == 0);
			assertThat(providers.waiting.subscribedKeys()).isZero();
		}
	}

	@Test
	void waitersOnManyKeysOfOneSlotShareOneSubscription() throws Exception {
		try (Providers providers = new Providers(cluster7)) {
			String tag = "{" + UUID.randomUUID() + "}";
			List<Lease> held = new ArrayList<>();
			List<CompletableFuture<Boolean>> waiters = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				String key = tag + i;
				held.add(providers.holderTemplate.acquire(key, LockOptions.defaults()));
				waiters.add(CompletableFuture.supplyAsync(() -> {
					try (Lease lease = providers.waitingTemplate.acquire(key, LockOptions.defaults())) {
						return lease.isHeld();
					}
				}, TestThreads.EACH));
			}
			await("5 waiters on one slot are listening", () -> {
				for (CompletableFuture<Boolean> waiter : waiters) {
					if (waiter.isCompletedExceptionally()) {
						// Say why, rather than time out waiting for a waiter that is
						// gone.
						waiter.join();
					}
				}
				return providers.waiting.subscribedKeys() == 5 && providers.waiting.subscribedSlots() == 1
						&& providers.waiting.isListening();
			});
			assertThat(shardChannels(cluster7)).as("sharded channels subscribed on the cluster").isEqualTo(1);
			held.forEach(Lease::release);
			for (CompletableFuture<Boolean> waiter : waiters) {
				assertThat(waiter.get(10, TimeUnit.SECONDS)).isTrue();
			}
			await("no sharded subscription is left after the waits",
					() -> providers.waiting.subscribedSlots() == 0 && shardChannels(cluster7) == 0);
		}
	}

	@Test
	void onRedis62TheClassicChannelStillWakesTheWaiter() throws Exception {
		try (RedisCluster cluster6 = RedisCluster.start(RedisVersion.V6_2, 3);
				Providers providers = new Providers(cluster6)) {
			assertThat(cluster6.nodes()).allSatisfy((node) -> assertThat(node.version()).startsWith("6.2."));
			String key = "classic-" + UUID.randomUUID();
			long waitedMillis = handOff(cluster6, providers, key);
			assertThat(providers.waiting.isShardedPubSub()).isFalse();
			assertThat(providers.waiting.subscribedSlots()).isZero();
			assertThat(waitedMillis)
				.as("ms from release to the waiter holding the lock (retry interval %d ms)", RETRY.toMillis())
				.isLessThan(RETRY.toMillis() / 2);
		}
	}

	/**
	 * One provider holds {@code key}, a waiter in another takes it after the release.
	 * Releases only once the waiter made an attempt after its subscription was confirmed,
	 * so that it is parked for the whole retry interval and only a signal can wake it
	 * early. Checks which publish command the release used; returns the milliseconds from
	 * the release to the waiter holding the lock.
	 */
	private static long handOff(RedisCluster cluster, Providers providers, String key) throws Exception {
		boolean sharded = cluster.nodes().get(0).version().startsWith("7.");
		Lease held = providers.holderTemplate.acquire(key, LockOptions.defaults());
		CompletableFuture<Long> waiter = CompletableFuture.supplyAsync(() -> {
			try (Lease lease = providers.waitingTemplate.acquire(key, LockOptions.defaults())) {
				return System.nanoTime();
			}
		}, TestThreads.EACH);
		await("the waiter's subscription is confirmed", () -> providers.waiting.subscribedKeys() == 1
				&& providers.waiting.isListening() && providers.waiting.subscribedSlots() == (sharded ? 1 : 0));
		if (sharded) {
			assertThat(shardChannels(cluster)).as("sharded channels subscribed on the cluster").isEqualTo(1);
		}
		long attempts = commandCalls(cluster, "pttl");
		await("the waiter tried again after its subscription was confirmed",
				() -> commandCalls(cluster, "pttl") > attempts);
		long spublish = commandCalls(cluster, "spublish");
		long publish = commandCalls(cluster, "publish");
		long released = System.nanoTime();
		held.release();
		long acquired = waiter.get(10, TimeUnit.SECONDS);
		long waitedMillis = TimeUnit.NANOSECONDS.toMillis(acquired - released);
		System.out.printf(
				"%s cluster: the waiter in another provider held the lock %d ms after the release"
						+ " (retry interval %d ms)%n",
				sharded ? "Redis 7 (sharded)" : "Redis 6.2 (classic)", waitedMillis, RETRY.toMillis());
		if (sharded) {
			assertThat(commandCalls(cluster, "spublish")).as("SPUBLISH calls").isGreaterThan(spublish);
			assertThat(commandCalls(cluster, "publish")).as("PUBLISH calls").isEqualTo(publish);
		}
		else {
			assertThat(commandCalls(cluster, "publish")).as("PUBLISH calls").isGreaterThan(publish);
		}
		return waitedMillis;
	}

	/** Calls of a command on all nodes, scripts' calls included. */
	private static long commandCalls(RedisCluster cluster, String command) {
		long calls = 0;
		String prefix = "cmdstat_" + command + ":calls=";
		for (RedisServer node : cluster.nodes()) {
			for (String line : node.command("INFO", "commandstats").split("\n")) {
				if (line.startsWith(prefix)) {
					calls += Long.parseLong(line.substring(prefix.length(), line.indexOf(',')));
				}
			}
		}
		return calls;
	}

	/** Sharded channels with a subscriber, over all nodes. */
	private static int shardChannels(RedisCluster cluster) {
		int channels = 0;
		for (RedisServer node : cluster.nodes()) {
			// An array reply: its first line is "*<count>".
			channels += Integer.parseInt(node.command("PUBSUB", "SHARDCHANNELS").substring(1));
		}
		return channels;
	}

	private static void await(String what, BooleanSupplier condition) {
		Conditions.await(what, Duration.ofSeconds(10), condition);
	}

	/** A holder and a waiting provider on connections of their own, as two JVMs. */
	private static final class Providers implements AutoCloseable {

		final LettuceConnectionFactory holderFactory;

		final LettuceConnectionFactory waitingFactory;

		final RedisLockProvider holder;

		final RedisLockProvider waiting;

		final RenewalScheduler holderScheduler = new RenewalScheduler();

		final RenewalScheduler waitingScheduler = new RenewalScheduler();

		final DefaultLockTemplate holderTemplate;

		final DefaultLockTemplate waitingTemplate;

		Providers(RedisCluster cluster) {
			this.holderFactory = connect(cluster);
			this.waitingFactory = connect(cluster);
			this.holder = new RedisLockProvider(this.holderFactory, "lock:", true);
			this.waiting = new RedisLockProvider(this.waitingFactory, "lock:", true);
			this.holderTemplate = template(this.holder, this.holderScheduler);
			this.waitingTemplate = template(this.waiting, this.waitingScheduler);
			// A cold cluster connection (topology discovery on a fresh JVM) can take
			// longer
			// than one store timeout; the tests here are about signals, not start-up.
			TestRedis.awaitAnswers(this.holder);
			TestRedis.awaitAnswers(this.waiting);
		}

		private static LettuceConnectionFactory connect(RedisCluster cluster) {
			LettuceConnectionFactory created = new LettuceConnectionFactory(
					new RedisClusterConfiguration(cluster.addresses()));
			created.afterPropertiesSet();
			created.start();
			return created;
		}

		private static DefaultLockTemplate template(RedisLockProvider provider, RenewalScheduler scheduler) {
			return new DefaultLockTemplate(provider, scheduler,
					LockOptions.builder()
						.waitTime(Duration.ofSeconds(10))
						.leaseTime(Duration.ofSeconds(30))
						.autoRenew(true)
						.retryInterval(RETRY)
						.build());
		}

		@Override
		public void close() {
			this.holder.close();
			this.waiting.close();
			this.holderScheduler.close();
			this.waitingScheduler.close();
			this.holderFactory.destroy();
			this.waitingFactory.destroy();
		}

	}

}
