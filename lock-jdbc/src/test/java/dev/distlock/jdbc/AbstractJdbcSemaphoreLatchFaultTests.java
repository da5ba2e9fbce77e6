package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockOptions;
import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.family.FamilyFault;
import dev.distlock.harness.family.LatchFaultCheck;
import dev.distlock.harness.fault.FamilyChecks;
import dev.distlock.harness.fault.FamilyWorkload;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The family's fault checks for semaphores and countdown latches on a database server of
 * the class's own, which two providers reach through a byte-level {@link TcpProxy} and a
 * third directly: never more permit holders than permits among holders not told of a loss
 * ({@link FamilyChecks}) while the connections are cut, partitioned and the server killed
 * and restarted on a schedule, and a latch never opened early ({@link LatchFaultCheck})
 * under each of those faults. The semaphore run lasts {@code distlock.faults.seconds} (4
 * s by default), each latch run {@code distlock.family.faults.seconds} (2 s).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
abstract class AbstractJdbcSemaphoreLatchFaultTests {

	/** The lease of every permit, as the family's network fault runs. */
	private static final Duration LEASE = Duration.ofMillis(1200);

	private static final Duration SEMAPHORE_RUN = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 4));

	private static final Duration LATCH_RUN = Duration.ofSeconds(Long.getLong("distlock.family.faults.seconds", 2));

	private DatabaseServer server;

	private TcpProxy proxy;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeAll
	void start() {
		this.server = startServer();
		this.proxy = TcpProxy.start(this.server.port());
		JdbcLockProvider setup = provider(false, JdbcLockProvider.DEFAULT_STORE_TIMEOUT);
		setup.createTableIfMissing();
		closeAll();
	}

	/** Starts a database server of this class's own. */
	abstract DatabaseServer startServer();

	@AfterEach
	void closeAll() {
		this.proxy.heal();
		if (!this.server.isAlive()) {
			this.server.restart();
		}
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			try {
				this.closeables.get(i).close();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}
		this.closeables.clear();
	}

	@AfterAll
	void stop() throws Exception {
		this.proxy.close();
		this.server.close();
	}

	/**
	 * A provider over a pool of its own with HikariCP's defaults, through the proxy or
	 * not; its calls bounded by {@code storeTimeout}.
	 */
	private JdbcLockProvider provider(boolean proxied, Duration storeTimeout) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(proxied
				? this.server.jdbcUrl()
					.replace("127.0.0.1:" + this.server.port() + "/", "127.0.0.1:" + this.proxy.port() + "/")
				: this.server.jdbcUrl());
		config.setUsername(this.server.username());
		config.setPassword(this.server.password());
		HikariDataSource pool = new HikariDataSource(config);
		this.closeables.add(pool);
		JdbcLockProvider provider = JdbcLockProvider.builder(pool)
			.tableName(JdbcFaultTarget.TABLE)
			.storeTimeout(storeTimeout)
			.build();
		this.closeables.add(provider);
		return provider;
	}

	/**
	 * Three "JVMs" of three threads each take permits of one semaphore of three, with
	 * renewed leases, while faults come one after another: a short partition, the server
	 * killed and restarted, every connection cut, a partition longer than the lease.
	 */
	@Test
	void neverMorePermitHoldersThanPermitsUnderFaults() throws Exception {
		// Calls time out after a lease, as in the mutex's fault runs: a hung call must
		// not outlive the permit it took.
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		List<DefaultLockTemplate> templates = new ArrayList<>();
		for (boolean proxied : new boolean[] { true, true, false }) {
			JdbcLockProvider provider = provider(proxied, LEASE);
			// Pools filled before the run, so that its first fault does not meet pools
			// still
			// opening their first connections.
			LockAttempt warm = LockAttempt
				.join(provider.tryLock(LockRequest.permit("family-sem-warm-up-" + UUID.randomUUID(), 1, LEASE)));
			assertThat(((LockAttempt.Acquired) warm).handle().release()).isTrue();
			DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
					LockOptions.builder()
						.waitTime(LEASE.multipliedBy(2))
						.leaseTime(LEASE)
						.autoRenew(true)
						.retryInterval(Duration.ofMillis(50))
						.build());
			this.closeables.add(template);
			templates.add(template);
		}
		FamilyWorkload workload = new FamilyWorkload("family-sem-" + UUID.randomUUID(), 3, LEASE);
		long end = System.nanoTime() + SEMAPHORE_RUN.toNanos();
		workload.start(templates, 3, end, 31);
		int faults = 0;
		while (System.nanoTime() - end < 0) {
			lastOut(LEASE.dividedBy(2));
			switch (faults++ % 4) {
				case 0 -> {
					this.proxy.blackhole();
					lastOut(LEASE.dividedBy(4));
				}
				case 1 -> {
					this.server.kill();
					lastOut(LEASE.dividedBy(4));
					this.server.restart();
				}
				case 2 -> this.proxy.disconnectAll();
				default -> {
					this.proxy.blackhole();
					lastOut(LEASE.multipliedBy(3).dividedBy(2));
				}
			}
			this.proxy.heal();
		}
		workload.join(LEASE.multipliedBy(6).plusSeconds(30));
		System.out.println(getClass().getSimpleName() + ": " + faults + " faults, " + workload.holds().size()
				+ " holds, outcomes " + workload.outcomes());
		List<String> checked = FamilyChecks.moreThanPermits(workload.holds(), 3);
		assertThat(checked).as("outcomes " + workload.outcomes()).hasSize(1);
		// A short run under faults on a loaded machine may never see two holders at once;
		// what must hold is never more than three.
		assertThat(FamilyChecks.maxInside(checked)).as("holders at once").isBetween(1, 3);
		assertThat(workload.outcomes()).as("some holds ended normally").containsKey("ok");
	}

	/** Whether a latch run kills and restarts the server. */
	boolean restartsInLatchRuns() {
		return true;
	}

	Stream<String> latchFaults() {
		return restartsInLatchRuns() ? Stream.of("connection resets", "partition", "server killed and restarted")
				: Stream.of("connection resets", "partition");
	}

	@ParameterizedTest(name = "a latch never opened early: {0}")
	@MethodSource("latchFaults")
	void latches(String fault) throws Exception {
		List<LockProvider> providers = List.of(provider(true, JdbcLockProvider.DEFAULT_STORE_TIMEOUT),
				provider(true, JdbcLockProvider.DEFAULT_STORE_TIMEOUT));
		LatchFaultCheck check = new LatchFaultCheck(providers);
		try {
			check.run(fault(fault), LATCH_RUN).assertPassed();
		}
		finally {
			check.close();
		}
	}

	private FamilyFault fault(String name) {
		return switch (name) {
			case "connection resets" -> FamilyFault.of(name, this.proxy::disconnectAll, this.proxy::disconnectAll);
			case "partition" -> FamilyFault.of(name, this.proxy::blackhole, this.proxy::heal);
			case "server killed and restarted" -> FamilyFault.of(name, this.server::kill, this.server::restart);
			default -> throw new IllegalArgumentException(name);
		};
	}

	/** Parks for {@code duration}: a fault's length is the point, not a wait. */
	private static void lastOut(Duration duration) {
		LockSupport.parkNanos(duration.toNanos());
	}

}
