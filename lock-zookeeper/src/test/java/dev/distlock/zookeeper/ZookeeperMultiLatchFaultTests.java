package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.family.FamilyFault;
import dev.distlock.harness.family.LatchFaultCheck;
import dev.distlock.harness.family.MultiLockFaultCheck;
import dev.distlock.spi.LockProvider;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The family's fault checks on a real ZooKeeper server, reached through a byte-level
 * proxy by two clients: never a partial multi-key lock, and a latch never opened early,
 * under no fault, connection resets, a partition shorter than a third of the session
 * timeout, and the server stopped and started again on its data. Each run lasts
 * {@code distlock.family.faults.seconds} (2 s by default).
 */
@Tag("server")
class ZookeeperMultiLatchFaultTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.family.faults.seconds", 2));

	private static final Duration LEASE = Duration.ofSeconds(2);

	/** Long enough that the partition (half a run) leaves the sessions alive. */
	private static final int SESSION_MILLIS = 10_000;

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	private TcpProxy proxy;

	private List<LockProvider> providers;

	@BeforeEach
	void start() {
		this.proxy = this.clients.closing(TcpProxy.start(this.clients.server.getPort()));
		this.providers = List.of(provider(), provider());
	}

	private LockProvider provider() {
		return this.clients
			.provider(this.clients.closing(TestZookeeper.client(this.proxy.connectString(), SESSION_MILLIS)));
	}

	static Stream<String> faults() {
		return Stream.of("none", "connection resets", "partition", "server restarted");
	}

	static Stream<String> latchFaults() {
		return Stream.of("connection resets", "partition", "server restarted");
	}

	private FamilyFault fault(String name) {
		TestingServer server = this.clients.server;
		return switch (name) {
			case "none" -> FamilyFault.NONE;
			case "connection resets" -> FamilyFault.of(name, this.proxy::disconnectAll, this.proxy::disconnectAll);
			case "partition" -> FamilyFault.of(name, this.proxy::blackhole, this.proxy::heal);
			case "server restarted" -> FamilyFault.of(name, () -> run(server::stop), () -> run(server::restart));
			default -> throw new IllegalArgumentException(name);
		};
	}

	@ParameterizedTest(name = "never a partial multi-key lock: {0}")
	@MethodSource("faults")
	void multiKeyLocks(String fault) throws Exception {
		MultiLockFaultCheck check = new MultiLockFaultCheck(this.providers, LEASE);
		try {
			check.run(fault(fault), 3, DURATION, fault.hashCode()).assertPassed();
		}
		finally {
			check.close();
		}
	}

	@ParameterizedTest(name = "a latch never opened early: {0}")
	@MethodSource("latchFaults")
	void latches(String fault) throws Exception {
		LatchFaultCheck check = new LatchFaultCheck(this.providers);
		try {
			check.run(fault(fault), DURATION).assertPassed();
		}
		finally {
			check.close();
		}
	}

	private static void run(ServerAction action) {
		try {
			action.run();
		}
		catch (Exception ex) {
			throw new IllegalStateException("Could not stop or restart the ZooKeeper test server", ex);
		}
	}

	@FunctionalInterface
	private interface ServerAction {

		void run() throws Exception;

	}

}
