package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LockOptions;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.FaultProxy;
import dev.distlock.testsupport.RedisServer;
import dev.distlock.testsupport.fault.FamilyChecks;
import dev.distlock.testsupport.fault.FamilyHold;
import dev.distlock.testsupport.fault.FamilyWorkload;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read-write locks and semaphores on Redis under the mutex's network faults: two "JVMs"
 * reach a redis-server of this class's own through a {@link FaultProxy} (replies delayed
 * past a third of the lease, a partition longer than the lease, a dropped reply with a
 * reset, every connection cut), a third directly. The checkers then find no writer
 * alongside a reader or another writer, and never more permit holders than permits, among
 * holders not told of a loss. The default build runs each briefly
 * ({@code distlock.faults.seconds}, 4 s here by default); {@code -Psoak} runs them for
 * 130 s each.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class RedisFamilyFaultTests {

	private static final Duration LEASE = Duration.ofMillis(1200);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 4));

	private RedisServer server;

	private FaultProxy proxy;

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeEach
	void start() {
		this.server = RedisServer.start();
		this.proxy = FaultProxy.start(this.server.host(), this.server.port());
	}

	@AfterEach
	void stop() throws Exception {
		this.proxy.heal();
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.factories.forEach(LettuceConnectionFactory::destroy);
		this.proxy.close();
		this.server.close();
	}

	@Test
	void neverAWriterAlongsideAReaderUnderNetworkFaults() throws Exception {
		FamilyWorkload workload = new FamilyWorkload("family-rw", 0, LEASE);
		run(workload, 11);
		List<FamilyHold> holds = workload.holds();
		assertThat(FamilyChecks.writerAlongsideOthers(holds)).as("outcomes " + workload.outcomes()).isEmpty();
		assertThat(holds).extracting(FamilyHold::kind).contains(FamilyHold.Kind.READ, FamilyHold.Kind.WRITE);
	}

	@Test
	void neverMorePermitHoldersThanPermitsUnderNetworkFaults() throws Exception {
		FamilyWorkload workload = new FamilyWorkload("family-sem", 3, LEASE);
		run(workload, 12);
		List<String> checked = FamilyChecks.moreThanPermits(workload.holds(), 3);
		assertThat(checked).as("outcomes " + workload.outcomes()).hasSize(1);
		assertThat(FamilyChecks.maxInside(checked)).as("holders at once").isBetween(2, 3);
	}

	private void run(FamilyWorkload workload, long seed) throws Exception {
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		List<DefaultLockTemplate> templates = List.of(template(proxied(), scheduler), template(proxied(), scheduler),
				template(TestRedis.connectionFactory(this.server), scheduler));
		long end = System.nanoTime() + DURATION.toNanos();
		workload.start(templates, 3, end, seed);
		Random random = new Random(seed);
		int faults = 0;
		while (System.nanoTime() - end < 0) {
			// The fault schedule: how long each fault lasts is the point, not a wait.
			LockSupport.parkNanos(LEASE.toNanos() / 2);
			switch (random.nextInt(4)) {
				case 0 -> {
					this.proxy.delayReplies(LEASE.dividedBy(3));
					LockSupport.parkNanos(LEASE.toNanos());
				}
				case 1 -> {
					this.proxy.blackhole();
					LockSupport.parkNanos(LEASE.multipliedBy(3).dividedBy(2).toNanos());
				}
				case 2 -> this.proxy.dropNextReplyAndReset();
				default -> this.proxy.disconnectAll();
			}
			this.proxy.heal();
			faults++;
		}
		workload.join(LEASE.multipliedBy(6).plusSeconds(30));
		assertThat(faults).as("faults injected").isPositive();
		assertThat(workload.outcomes()).as("some holds ended normally").containsKey("ok");
	}

	private LettuceConnectionFactory proxied() {
		return TestRedis.connectionFactory(this.proxy.host(), this.proxy.port(), Duration.ofSeconds(60));
	}

	private DefaultLockTemplate template(LettuceConnectionFactory factory, RenewalScheduler scheduler) {
		this.factories.add(factory);
		RedisLockProvider provider = new RedisLockProvider(factory, "lock:", false);
		this.closeables.add(provider);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(LEASE.multipliedBy(2))
					.leaseTime(LEASE)
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build());
		this.closeables.add(template);
		return template;
	}

}
