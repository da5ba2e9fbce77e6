package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.family.FamilyFault;
import dev.distlock.harness.family.LatchFaultCheck;
import dev.distlock.harness.family.MultiLockFaultCheck;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The family's fault checks on a real {@code redis-server} of their own, reached through
 * a byte-level proxy: never a partial multi-key lock, and a latch never opened early,
 * under no fault, connection resets, a partition shorter than the lease, a paused server
 * and a server restarted without its data. Each run lasts
 * {@code distlock.family.faults.seconds} (2 s by default, 60 s under {@code -Psoak}).
 */
@Tag("server")
class RedisFamilyFaultTests {

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.family.faults.seconds", 2));

	private static final Duration LEASE = Duration.ofSeconds(2);

	private final AtomicReference<RedisServer> server = new AtomicReference<>();

	private TcpProxy proxy;

	private LettuceConnectionFactory factory;

	private LettuceConnectionFactory otherFactory;

	private RedisLockProvider provider;

	private RedisLockProvider otherProvider;

	@BeforeEach
	void start() {
		this.server.set(RedisServer.start());
		this.proxy = TcpProxy.start(this.server.get().port());
		this.factory = TestRedis.connectionFactory("127.0.0.1", this.proxy.port(), Duration.ofSeconds(10));
		this.otherFactory = TestRedis.connectionFactory("127.0.0.1", this.proxy.port(), Duration.ofSeconds(10));
		this.provider = new RedisLockProvider(this.factory, TestRedis.PREFIX, false, 0, Duration.ZERO,
				Duration.ofMillis(500));
		this.otherProvider = new RedisLockProvider(this.otherFactory, TestRedis.PREFIX, false, 0, Duration.ZERO,
				Duration.ofMillis(500));
		TestRedis.awaitAnswers(this.provider);
		TestRedis.awaitAnswers(this.otherProvider);
	}

	@AfterEach
	void stop() throws Exception {
		this.provider.close();
		this.otherProvider.close();
		this.factory.destroy();
		this.otherFactory.destroy();
		this.proxy.close();
		this.server.get().close();
	}

	static Stream<String> faults() {
		return Stream.of("none", "connection resets", "partition", "server paused", "server restarted");
	}

	/**
	 * The latch's control run is the in-memory store's; here, the faults that lose
	 * replies or state.
	 */
	static Stream<String> latchFaults() {
		return Stream.of("connection resets", "partition", "server restarted");
	}

	private FamilyFault fault(String name) {
		return switch (name) {
			case "none" -> FamilyFault.NONE;
			case "connection resets" -> FamilyFault.of(name, this.proxy::disconnectAll, this.proxy::disconnectAll);
			case "partition" -> FamilyFault.of(name, this.proxy::blackhole, this.proxy::heal);
			case "server paused" ->
				FamilyFault.of(name, () -> this.server.get().pause(), () -> this.server.get().resume());
			case "server restarted" -> FamilyFault.of(name, () -> this.server.get().kill(),
					() -> this.server.set(this.server.get().restart()));
			default -> throw new IllegalArgumentException(name);
		};
	}

	private List<LockProvider> providers() {
		return List.of(this.provider, this.otherProvider);
	}

	@ParameterizedTest(name = "never a partial multi-key lock: {0}")
	@MethodSource("faults")
	void multiKeyLocks(String fault) throws Exception {
		MultiLockFaultCheck check = new MultiLockFaultCheck(providers(), LEASE);
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
		LatchFaultCheck check = new LatchFaultCheck(providers());
		try {
			check.run(fault(fault), DURATION).assertPassed();
		}
		finally {
			check.close();
		}
	}

}
