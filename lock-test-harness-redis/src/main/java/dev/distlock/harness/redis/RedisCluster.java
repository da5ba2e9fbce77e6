package dev.distlock.harness.redis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * A real Redis Cluster of {@code redis-server} processes on loopback, masters only, the
 * 16384 slots split evenly, joined with {@code CLUSTER MEET}: no {@code redis-cli}
 * needed. Ports are chosen so that each node's cluster bus port (its port + 10000) is
 * free too. {@link #start(RedisVersion, int)} builds it from one bundled Redis version,
 * for example a 6.2 cluster to prove a fallback for servers without sharded pub/sub.
 */
public final class RedisCluster implements AutoCloseable {

	private static final int SLOTS = 16384;

	private final List<RedisServer> nodes;

	private RedisCluster(List<RedisServer> nodes) {
		this.nodes = nodes;
	}

	/**
	 * Starts {@code masters} nodes of the default {@code redis-server} and waits until
	 * the cluster reports {@code ok}.
	 */
	public static RedisCluster start(int masters) {
		return start(null, masters);
	}

	/**
	 * Starts {@code masters} nodes of the bundled binary of {@code version} (the default
	 * binary when {@code null}) and waits until the cluster reports {@code ok}.
	 */
	public static RedisCluster start(RedisVersion version, int masters) {
		List<RedisServer> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < masters; i++) {
				String[] args = { "--cluster-enabled", "yes", "--cluster-node-timeout", "5000" };
				nodes.add((version != null) ? RedisServer.startOn(version, portWithFreeBus(), args)
						: RedisServer.startOn(portWithFreeBus(), args));
			}
			for (int i = 0; i < masters; i++) {
				int from = i * SLOTS / masters;
				int to = (i + 1) * SLOTS / masters;
				List<String> command = new ArrayList<>(List.of("CLUSTER", "ADDSLOTS"));
				for (int slot = from; slot < to; slot++) {
					command.add(Integer.toString(slot));
				}
				check(nodes.get(i).command(command.toArray(String[]::new)), "CLUSTER ADDSLOTS");
			}
			for (int i = 1; i < masters; i++) {
				check(nodes.get(0).command("CLUSTER", "MEET", "127.0.0.1", Integer.toString(nodes.get(i).port())),
						"CLUSTER MEET");
			}
			RedisCluster cluster = new RedisCluster(nodes);
			cluster.awaitOk(Duration.ofSeconds(30));
			return cluster;
		}
		catch (RuntimeException ex) {
			nodes.forEach(RedisServer::close);
			throw ex;
		}
	}

	public List<RedisServer> nodes() {
		return this.nodes;
	}

	/** {@code host:port} of every node. */
	public List<String> addresses() {
		return this.nodes.stream().map((node) -> node.host() + ":" + node.port()).toList();
	}

	private void awaitOk(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (true) {
			boolean ok = this.nodes.stream()
				.allMatch((node) -> node.command("CLUSTER", "INFO").lines().anyMatch("cluster_state:ok"::equals));
			if (ok) {
				return;
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("The cluster did not report cluster_state:ok within " + timeout);
			}
			LockSupport.parkNanos(20_000_000);
		}
	}

	private static void check(String reply, String what) {
		if (!"+OK".equals(reply)) {
			throw new IllegalStateException(what + " failed: " + reply);
		}
	}

	private static int portWithFreeBus() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(20000, 30000);
			if (free(port) && free(port + 10000)) {
				return port;
			}
		}
		throw new IllegalStateException("No free port pair (port, port + 10000) between 20000 and 40000");
	}

	private static boolean free(int port) {
		try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	@Override
	public void close() {
		this.nodes.forEach(RedisServer::close);
	}

}
