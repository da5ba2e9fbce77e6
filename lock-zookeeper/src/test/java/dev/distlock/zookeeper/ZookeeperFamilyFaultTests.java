package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LockOptions;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.TcpProxy;
import dev.distlock.testsupport.fault.FamilyChecks;
import dev.distlock.testsupport.fault.FamilyHold;
import dev.distlock.testsupport.fault.FamilyWorkload;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read-write locks and semaphores on ZooKeeper under network faults: two clients reach
 * the server through a {@link TcpProxy} (partitions shorter than a third of the session
 * timeout, which lose nothing; partitions of twice the session timeout, which expire the
 * sessions; every connection reset), a third directly. Sessions time out after the lease.
 * The checkers then find no writer alongside a reader or another writer, and never more
 * permit holders than permits, among holders not told of a loss. The default build runs
 * each briefly ({@code distlock.faults.seconds}, 4 s here by default); {@code -Psoak}
 * runs them for 130 s each.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ZookeeperFamilyFaultTests {

	private static final Duration LEASE = Duration.ofMillis(1200);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 4));

	private TestingServer server;

	private TcpProxy proxy;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeEach
	void start() {
		this.server = TestZookeeper.server(ZookeeperStoreFixture.TICK_MILLIS);
		this.proxy = TcpProxy.start(this.server.getPort());
	}

	@AfterEach
	void stop() throws Exception {
		this.proxy.heal();
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.proxy.close();
		this.server.close();
	}

	@Test
	void neverAWriterAlongsideAReaderUnderNetworkFaults() throws Exception {
		FamilyWorkload workload = new FamilyWorkload("family-rw", 0, LEASE);
		run(workload, 21);
		List<FamilyHold> holds = workload.holds();
		assertThat(FamilyChecks.writerAlongsideOthers(holds)).as("outcomes " + workload.outcomes()).isEmpty();
		assertThat(holds).extracting(FamilyHold::kind).contains(FamilyHold.Kind.READ, FamilyHold.Kind.WRITE);
	}

	@Test
	void neverMorePermitHoldersThanPermitsUnderNetworkFaults() throws Exception {
		FamilyWorkload workload = new FamilyWorkload("family-sem", 3, LEASE);
		run(workload, 22);
		List<String> checked = FamilyChecks.moreThanPermits(workload.holds(), 3);
		assertThat(checked).as("outcomes " + workload.outcomes()).hasSize(1);
		assertThat(FamilyChecks.maxInside(checked)).as("holders at once").isBetween(2, 3);
	}

	private void run(FamilyWorkload workload, long seed) throws Exception {
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		List<DefaultLockTemplate> templates = List.of(template(this.proxy.connectString(), scheduler),
				template(this.proxy.connectString(), scheduler), template(this.server.getConnectString(), scheduler));
		long end = System.nanoTime() + DURATION.toNanos();
		workload.start(templates, 3, end, seed);
		Random random = new Random(seed);
		int faults = 0;
		while (System.nanoTime() - end < 0) {
			// The fault schedule: how long each fault lasts is the point, not a wait.
			LockSupport.parkNanos(LEASE.toNanos() / 2);
			switch (random.nextInt(3)) {
				case 0 -> {
					this.proxy.blackhole();
					LockSupport.parkNanos(LEASE.toNanos() / 4);
				}
				case 1 -> {
					this.proxy.blackhole();
					LockSupport.parkNanos(LEASE.multipliedBy(2).toNanos());
				}
				default -> this.proxy.disconnectAll();
			}
			this.proxy.heal();
			faults++;
		}
		workload.join(LEASE.multipliedBy(6).plusSeconds(30));
		System.out.println(faults + " faults, " + workload.holds().size() + " holds, outcomes " + workload.outcomes());
		assertThat(faults).as("faults injected").isPositive();
		assertThat(workload.outcomes()).as("some holds ended normally").containsKey("ok");
	}

	private DefaultLockTemplate template(String connectString, RenewalScheduler scheduler) {
		CuratorFramework client = TestZookeeper.client(connectString, (int) LEASE.toMillis());
		this.closeables.add(client);
		ZookeeperLockProvider provider = new ZookeeperLockProvider(client);
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
