package dev.distlock.harness.redis;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A real Redis Sentinel deployment on loopback: one master, one replica and three
 * sentinels ({@code redis-server <file> --sentinel}) that monitor the master as
 * {@value #MASTER_NAME} with a quorum of two. Failure detection is tuned for tests: a
 * master is down after {@value #DOWN_AFTER_MILLIS} ms without a valid reply, and the
 * failover timeout is {@value #FAILOVER_TIMEOUT_MILLIS} ms (a failover that did not get
 * going is tried again after twice that). Everything binds 127.0.0.1, so the addresses
 * sentinels announce to each other and hand to clients are the ones a client on this host
 * connects to; no announce or hostname settings are needed. {@link #close()} stops the
 * sentinels first, so that none of them reconfigures a server that is going away.
 *
 * <pre>
 * try (RedisSentinel sentinel = RedisSentinel.start()) {
 *     spring.data.redis.sentinel.master = sentinel.masterName()
 *     spring.data.redis.sentinel.nodes = sentinel.nodes()
 *     RedisServer old = sentinel.master();
 *     old.kill();
 *     RedisServer promoted = sentinel.awaitFailoverFrom(old);
 * }
 * </pre>
 *
 * <p>
 * After {@link #failover()} the old master keeps serving the clients connected to it as a
 * master until the sentinels demote it, which they do only once it has reported itself a
 * master for about eight seconds (four of their two-second publish periods); clients that
 * connect meanwhile are sent to the new master.
 */
public final class RedisSentinel implements AutoCloseable {

	/** The name the sentinels monitor the master under. */
	public static final String MASTER_NAME = "distlock";

	/** {@code sentinel down-after-milliseconds}. */
	public static final int DOWN_AFTER_MILLIS = 1000;

	/** {@code sentinel failover-timeout}. */
	public static final int FAILOVER_TIMEOUT_MILLIS = 3000;

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);

	private static final Duration FAILOVER_WAIT = Duration.ofSeconds(30);

	private final List<RedisServer> servers;

	private final List<RedisServer> sentinels;

	private RedisSentinel(List<RedisServer> servers, List<RedisServer> sentinels) {
		this.servers = servers;
		this.sentinels = sentinels;
	}

	/**
	 * Starts the deployment with the default {@code redis-server} and waits until every
	 * sentinel knows the master, its replica and the two other sentinels.
	 */
	public static RedisSentinel start() {
		return start(RedisServerBinary.resolve());
	}

	/** As {@link #start()}, with the bundled binary of {@code version}. */
	public static RedisSentinel start(RedisVersion version) {
		return start(RedisServerBinary.resolve(version));
	}

	private static RedisSentinel start(Path binary) {
		List<RedisServer> servers = new ArrayList<>();
		List<RedisServer> sentinels = new ArrayList<>();
		try {
			RedisServer master = RedisServer.startOn(binary, 0);
			servers.add(master);
			servers.add(RedisServer.startOn(binary, 0, "--replicaof", master.host(), Integer.toString(master.port())));
			String config = String.join("\n",
					"sentinel monitor " + MASTER_NAME + " " + master.host() + " " + master.port() + " 2",
					"sentinel down-after-milliseconds " + MASTER_NAME + " " + DOWN_AFTER_MILLIS,
					"sentinel failover-timeout " + MASTER_NAME + " " + FAILOVER_TIMEOUT_MILLIS,
					"sentinel parallel-syncs " + MASTER_NAME + " 1", "");
			for (int i = 0; i < 3; i++) {
				sentinels.add(RedisServer.startSentinel(binary, config));
			}
			RedisSentinel deployment = new RedisSentinel(servers, sentinels);
			deployment.awaitReplicaOf(servers.get(1), master, STARTUP_TIMEOUT);
			await("every sentinel sees the master, 1 replica and 3 sentinels", STARTUP_TIMEOUT,
					() -> deployment.sentinels.stream()
						.allMatch((sentinel) -> masterLine(sentinel)
							.contains("status=ok,address=" + address(master) + ",slaves=1,sentinels=3")));
			return deployment;
		}
		catch (RuntimeException ex) {
			sentinels.forEach(RedisServer::close);
			servers.forEach(RedisServer::close);
			throw ex;
		}
	}

	/** The value for {@code spring.data.redis.sentinel.master}. */
	public String masterName() {
		return MASTER_NAME;
	}

	/**
	 * {@code host:port} of every sentinel, comma-separated, as
	 * {@code spring.data.redis.sentinel.nodes} takes them.
	 */
	public String nodes() {
		return this.sentinels.stream().map(RedisSentinel::address).collect(Collectors.joining(","));
	}

	/** The three sentinel processes. */
	public List<RedisServer> sentinels() {
		return List.copyOf(this.sentinels);
	}

	/** The two data servers, in the order they were started (first master first). */
	public List<RedisServer> servers() {
		return List.copyOf(this.servers);
	}

	/**
	 * The data server that the first sentinel names as master now.
	 * @throws IllegalStateException if it names none of them
	 */
	public RedisServer master() {
		return named(this.sentinels.get(0)).orElseThrow(() -> new IllegalStateException(
				"The sentinel names no server of this deployment: " + masterLine(this.sentinels.get(0))));
	}

	/** The data server that is not {@link #master()}. */
	public RedisServer replica() {
		RedisServer master = master();
		return this.servers.stream().filter((server) -> server != master).findFirst().orElseThrow();
	}

	/**
	 * {@code SENTINEL FAILOVER}: promotes the replica without asking the other sentinels,
	 * and waits until every sentinel names it. The old master is not demoted yet (see the
	 * class documentation); {@link #awaitReplicaOf} waits for that.
	 * @return the new master
	 */
	public RedisServer failover() {
		RedisServer from = master();
		String reply = this.sentinels.get(0).command("SENTINEL", "FAILOVER", MASTER_NAME);
		if (!"+OK".equals(reply)) {
			throw new IllegalStateException("SENTINEL FAILOVER failed: " + reply);
		}
		return awaitFailoverFrom(from);
	}

	/**
	 * Waits until every sentinel names a master other than {@code from} (after
	 * {@code from} was killed, paused or failed over) and that server says it is a
	 * master.
	 * @return the new master
	 */
	public RedisServer awaitFailoverFrom(RedisServer from) {
		await("every sentinel names a master other than " + address(from), FAILOVER_WAIT,
				() -> this.sentinels.stream().allMatch((sentinel) -> {
					Optional<RedisServer> named = named(sentinel);
					return named.isPresent() && named.get().port() != from.port();
				}));
		RedisServer promoted = master();
		await(address(promoted) + " reports role:master", FAILOVER_WAIT,
				() -> info(promoted, "replication").contains("role:master"));
		return promoted;
	}

	/**
	 * Waits until {@code replica} replicates {@code master} with its link up, and the
	 * master counts it as an online replica.
	 */
	public void awaitReplicaOf(RedisServer replica, RedisServer master) {
		awaitReplicaOf(replica, master, FAILOVER_WAIT);
	}

	private void awaitReplicaOf(RedisServer replica, RedisServer master, Duration timeout) {
		await(address(replica) + " replicates " + address(master), timeout, () -> {
			String replicaInfo = info(replica, "replication");
			String masterInfo = info(master, "replication");
			return replicaInfo.contains("role:slave") && replicaInfo.contains("master_port:" + master.port())
					&& replicaInfo.contains("master_link_status:up")
					&& masterInfo.lines()
						.anyMatch((line) -> line.startsWith("slave") && line.contains("port=" + replica.port())
								&& line.contains("state=online"));
		});
	}

	/** Stops the sentinels, then the data servers, and removes their directories. */
	@Override
	public void close() {
		this.sentinels.forEach(RedisServer::close);
		this.servers.forEach(RedisServer::close);
	}

	private Optional<RedisServer> named(RedisServer sentinel) {
		String line = masterLine(sentinel);
		return this.servers.stream().filter((server) -> line.contains("address=" + address(server) + ",")).findFirst();
	}

	/**
	 * The sentinel's line for the master, from {@code INFO sentinel}, e.g.
	 * {@code master0:name=distlock,status=ok,address=127.0.0.1:6379,slaves=1,sentinels=3}.
	 */
	private static String masterLine(RedisServer sentinel) {
		return info(sentinel, "sentinel").lines()
			.filter((line) -> line.startsWith("master0:"))
			.findFirst()
			.orElse("(no master0 line)");
	}

	private static String info(RedisServer server, String section) {
		try {
			return server.command("INFO", section);
		}
		catch (RuntimeException ex) {
			// not answering: down, paused or restarting
			return "";
		}
	}

	private static String address(RedisServer server) {
		return server.host() + ":" + server.port();
	}

	private static void await(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("Timed out after " + timeout + " waiting until " + what);
			}
			LockSupport.parkNanos(20_000_000);
		}
	}

}
