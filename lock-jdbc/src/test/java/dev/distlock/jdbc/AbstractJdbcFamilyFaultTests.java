package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockOptions;
import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.family.FamilyFault;
import dev.distlock.harness.family.MultiLockFaultCheck;
import dev.distlock.harness.fault.FamilyChecks;
import dev.distlock.harness.fault.FamilyHold;
import dev.distlock.harness.fault.FamilyWorkload;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Multi-key and read-write locks on a database server of the class's own, reached through
 * a byte-level proxy: never a partial multi-key lock, and never a writer alongside a
 * reader or another writer among holders not told of a loss, under no fault, connections
 * cut, a partition longer than the lease, and the server killed and started again on its
 * data. Each run lasts {@code distlock.family.faults.seconds} (2 s by default).
 */
@Tag("server")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 5, unit = TimeUnit.MINUTES)
abstract class AbstractJdbcFamilyFaultTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.family.faults.seconds", 2));

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final String TABLE = "family_fault_lock";

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private DatabaseServer server;

	private TcpProxy proxy;

	/** The database server: one of the test's own if its faults kill it. */
	abstract DatabaseServer startServer();

	/** Whether the server is the test's own, to be closed after it. */
	abstract boolean ownServer();

	/** The faults of this database's runs, of {@link #fault(String)}'s names. */
	abstract List<String> faultNames();

	/** The faults of the read-write run, in turn. */
	List<String> readWriteFaultNames() {
		return faultNames();
	}

	@BeforeEach
	void start() {
		if (this.server == null) {
			this.server = startServer();
			JdbcLockProvider direct = new JdbcLockProvider(this.server.dataSource(), TABLE);
			direct.createTableIfMissing();
			direct.validateSchema();
			direct.close();
		}
		this.proxy = closeAfter(TcpProxy.start(this.server.port()));
	}

	@AfterEach
	void stop() throws Exception {
		this.proxy.heal();
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.closeables.clear();
	}

	@org.junit.jupiter.api.AfterAll
	void stopServer() throws Exception {
		if (ownServer()) {
			this.server.close();
		}
	}

	private <T extends AutoCloseable> T closeAfter(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	/** A provider of its own, through the proxy or straight to the server. */
	private LockProvider provider(boolean proxied) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(proxied
				? this.server.jdbcUrl()
					.replace("127.0.0.1:" + this.server.port() + "/", "127.0.0.1:" + this.proxy.port() + "/")
				: this.server.jdbcUrl());
		config.setUsername(this.server.username());
		config.setPassword(this.server.password());
		HikariDataSource dataSource = closeAfter(new HikariDataSource(config));
		return closeAfter(new JdbcLockProvider(dataSource, TABLE));
	}

	Stream<String> faults() {
		return faultNames().stream();
	}

	private FamilyFault fault(String name) {
		return switch (name) {
			case "none" -> FamilyFault.NONE;
			case "connections cut" -> FamilyFault.of(name, this.proxy::disconnectAll, this.proxy::disconnectAll);
			case "partition" -> FamilyFault.of(name, this.proxy::blackhole, this.proxy::heal);
			case "server restarted" -> FamilyFault.of(name, this.server::kill, this.server::restart);
			default -> throw new IllegalArgumentException(name);
		};
	}

	@ParameterizedTest(name = "never a partial multi-key lock: {0}")
	@MethodSource("faults")
	void multiKeyLocks(String fault) throws Exception {
		MultiLockFaultCheck check = new MultiLockFaultCheck(List.of(provider(true), provider(true)), LEASE);
		try {
			check.run(fault(fault), 3, DURATION, fault.hashCode()).assertPassed();
		}
		finally {
			check.close();
		}
	}

	/**
	 * Three templates, two through the proxy and one straight to the server, read and
	 * write one key while the faults come in turn, a restart first, each other fault
	 * lasting about half a lease.
	 */
	@Test
	void neverAWriterAlongsideAReaderUnderFaults() throws Exception {
		RenewalScheduler scheduler = closeAfter(new RenewalScheduler());
		List<DefaultLockTemplate> templates = List.of(template(provider(true), scheduler),
				template(provider(true), scheduler), template(provider(false), scheduler));
		FamilyWorkload workload = new FamilyWorkload("family-rw", 0, LEASE);
		long end = System.nanoTime() + DURATION.multipliedBy(3).toNanos();
		workload.start(templates, 3, end, 17);
		// A restart first: holds come again after it, within the run.
		List<FamilyFault> faults = readWriteFaultNames().stream()
			.filter((name) -> !name.equals("none"))
			.sorted(Comparator.comparing((String name) -> !name.equals("server restarted")))
			.map(this::fault)
			.toList();
		int injected = 0;
		while (System.nanoTime() - end < 0) {
			FamilyFault fault = faults.get(injected++ % faults.size());
			LockSupport.parkNanos(LEASE.dividedBy(4).toNanos());
			fault.inject();
			LockSupport.parkNanos(LEASE.dividedBy(2).toNanos());
			fault.heal();
		}
		workload.join(LEASE.multipliedBy(6).plusSeconds(30));
		List<FamilyHold> holds = workload.holds();
		assertThat(injected).as("faults injected").isPositive();
		assertThat(FamilyChecks.writerAlongsideOthers(holds)).as("outcomes " + workload.outcomes()).isEmpty();
		assertThat(holds).as("outcomes " + workload.outcomes())
			.extracting(FamilyHold::kind)
			.contains(FamilyHold.Kind.READ, FamilyHold.Kind.WRITE);
	}

	private DefaultLockTemplate template(LockProvider provider, RenewalScheduler scheduler) {
		return closeAfter(new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(LEASE.multipliedBy(2))
					.leaseTime(LEASE)
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build()));
	}

}
