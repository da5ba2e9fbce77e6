package dev.distlock.fault;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.contract.Conditions;
import dev.distlock.harness.FaultProxy;
import dev.distlock.harness.fault.FaultTarget;
import dev.distlock.harness.redis.RedisResources;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisFixture;
import dev.distlock.redis.RedisProviderFactory;
import dev.distlock.redis.TestRedis;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.ArrayOutput;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The servers of one fault run: the lock server clients reach through a
 * {@link FaultProxy}, optionally a replica fed through a second proxy on the replication
 * link (for lost-write failovers), and the resource server, which no fault touches. The
 * harness talks to the lock servers directly, past the proxies.
 */
final class FaultLayout implements FaultTarget, RedisFixture {

	final RedisServer resource;

	final FaultProxy clients;

	/** The current master; replaced when it is restarted or failed over. */
	private RedisServer master;

	private RedisServer replica;

	private FaultProxy replication;

	private LettuceConnectionFactory adminConnections;

	private StringRedisTemplate admin;

	private final List<RedisServer> toClose = new ArrayList<>();

	private FaultLayout(RedisServer master, RedisServer replica, FaultProxy replication) {
		this.resource = RedisServer.start();
		this.master = master;
		this.replica = replica;
		this.replication = replication;
		this.clients = FaultProxy.start(master.host(), master.port());
		connectAdmin();
	}

	/** One lock server, with the given extra {@code redis-server} arguments. */
	static FaultLayout single(String... args) {
		return new FaultLayout(RedisServer.start(args), null, null);
	}

	/** A master and a replica whose replication link runs through a proxy. */
	static FaultLayout replicated() {
		RedisServer master = RedisServer.start();
		RedisServer replica = RedisServer.start();
		FaultProxy link = FaultProxy.start(master.host(), master.port());
		FaultLayout layout = new FaultLayout(master, replica, link);
		layout.follow(replica, link);
		return layout;
	}

	RedisServer master() {
		return this.master;
	}

	StringRedisTemplate admin() {
		return this.admin;
	}

	/** Kills the master with SIGKILL and starts it again on its port and directory. */
	void restartMaster() {
		this.master.kill();
		this.toClose.add(this.master);
		this.master = this.master.restart();
	}

	/** The clients' proxy and the resource server. */
	@Override
	public Map<String, String> settings() {
		Map<String, String> settings = new LinkedHashMap<>(RedisResources.settings(this.resource));
		settings.put(RedisProviderFactory.HOST, this.clients.host());
		settings.put(RedisProviderFactory.PORT, Integer.toString(this.clients.port()));
		return settings;
	}

	/**
	 * Lock keys and fair queue keys still in Redis once every holder and waiter is gone
	 * and a lease has passed (a key whose holder lost its connection expires after its
	 * lease; a queue whose last waiter died expires after twice the queue timeout, under
	 * the lease plus the margin here), plus subscribers left on the release channel.
	 */
	@Override
	public int leftInStore(Duration lease, StringBuilder detail) {
		long deadline = System.nanoTime() + lease.plusSeconds(3).toNanos();
		Set<String> keys;
		long subscribers;
		do {
			keys = this.admin.keys(TestRedis.PREFIX + "*");
			keys.remove(TestRedis.PREFIX);
			// fair queues and waiter deadlines: "{slot tag}lock:<key>:queue" and so on
			keys.addAll(this.admin.keys("{*}" + TestRedis.PREFIX + "*"));
			subscribers = subscribers(this.admin);
			if (keys.isEmpty() && subscribers == 0) {
				return 0;
			}
			// a bounded poll: a tight loop would starve the server it asks
			LockSupport.parkNanos(20_000_000L);
		}
		while (System.nanoTime() - deadline < 0);
		detail.append(", in Redis ").append(keys).append(" and ").append(subscribers).append(" subscribers");
		return keys.size() + (int) subscribers;
	}

	private static long subscribers(StringRedisTemplate admin) {
		try (RedisConnection connection = admin.getRequiredConnectionFactory().getConnection()) {
			Object reply = ((LettuceConnection) connection).execute("PUBSUB",
					new ArrayOutput<>(ByteArrayCodec.INSTANCE), "NUMSUB".getBytes(StandardCharsets.UTF_8),
					(TestRedis.PREFIX + "released").getBytes(StandardCharsets.UTF_8));
			return (reply instanceof List<?> list && list.size() == 2) ? ((Number) list.get(1)).longValue() : 0;
		}
	}

	/**
	 * Freezes the replication link: writes to the master from now on do not reach the
	 * replica.
	 */
	void freezeReplication() {
		this.replication.blackhole();
	}

	/**
	 * Promotes the replica and points the clients at it, cutting their connections, as a
	 * failover would; the old master then becomes a replica of the new one, dropping what
	 * it had not replicated.
	 */
	void failover() {
		RedisServer promoted = this.replica;
		promoted.command("REPLICAOF", "NO", "ONE");
		this.clients.retarget(promoted.host(), promoted.port());
		this.clients.disconnectAll();
		RedisServer demoted = this.master;
		this.master = promoted;
		this.replica = demoted;
		this.replication.retarget(promoted.host(), promoted.port());
		this.replication.disconnectAll();
		this.replication.heal();
		follow(demoted, this.replication);
		reconnectAdmin();
	}

	/**
	 * Waits until the replica's link to the master is up, so a freeze means something.
	 */
	void awaitReplicaInSync(Duration timeout) {
		Conditions.await("the replica is in sync", timeout, () -> info(this.replica, "master_link_status").equals("up")
				&& info(this.replica, "master_sync_in_progress").equals("0"));
	}

	private static void follow(RedisServer replica, FaultProxy link) {
		replica.command("REPLICAOF", link.host(), Integer.toString(link.port()));
	}

	private static String info(RedisServer server, String field) {
		LettuceConnectionFactory factory = TestRedis.connectionFactory(server);
		try {
			Properties info = new StringRedisTemplate(factory)
				.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("replication"));
			return (info != null) ? info.getProperty(field, "") : "";
		}
		finally {
			factory.destroy();
		}
	}

	private void connectAdmin() {
		this.adminConnections = TestRedis.connectionFactory(this.master.host(), this.master.port(),
				Duration.ofSeconds(5));
		this.admin = new StringRedisTemplate(this.adminConnections);
	}

	private void reconnectAdmin() {
		this.adminConnections.destroy();
		connectAdmin();
	}

	@Override
	public void close() {
		this.adminConnections.destroy();
		this.clients.close();
		if (this.replication != null) {
			this.replication.close();
		}
		this.master.close();
		if (this.replica != null) {
			this.replica.close();
		}
		for (RedisServer old : this.toClose) {
			if (old.isAlive()) {
				old.close();
			}
		}
		this.resource.close();
	}

}
