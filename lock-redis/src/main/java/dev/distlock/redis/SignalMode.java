package dev.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;

import io.lettuce.core.cluster.RedisClusterClient;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * How release signals travel, decided once per provider. A standalone server, a cluster
 * with a master older than Redis 7 and a client other than Lettuce use classic pub/sub on
 * one channel; a cluster whose masters all run Redis 7 or newer uses sharded pub/sub,
 * which reaches only the nodes of the lock's slot instead of every node.
 */
enum SignalMode {

	/** {@code PUBLISH} and {@code SUBSCRIBE} on one channel for all locks. */
	CLASSIC,

	/**
	 * {@code SPUBLISH} and {@code SSUBSCRIBE} on one channel per cluster slot,
	 * hash-tagged into that slot.
	 */
	SHARDED;

	private static final Log logger = LogFactory.getLog(SignalMode.class);

	/**
	 * Asks every master of the cluster for its {@code redis_version} (one
	 * {@code CLUSTER NODES} and one {@code INFO server} per master). Failures propagate:
	 * the caller decides again later.
	 */
	static SignalMode detect(RedisConnectionFactory connectionFactory) {
		if (!(connectionFactory instanceof LettuceConnectionFactory lettuce)
				|| !(lettuce.getNativeClient() instanceof RedisClusterClient)) {
			logger.info("Lock release signals use classic pub/sub: sharded pub/sub needs a Lettuce cluster client,"
					+ " not " + connectionFactory.getClass().getName());
			return CLASSIC;
		}
		List<String> versions = new ArrayList<>();
		boolean allSharded = true;
		try (RedisClusterConnection connection = connectionFactory.getClusterConnection()) {
			for (RedisClusterNode node : connection.clusterGetNodes()) {
				if (!node.isMaster()) {
					continue;
				}
				Properties info = connection.serverCommands().info(node, "server");
				String version = (info != null) ? info.getProperty("redis_version", "?") : "?";
				versions.add(node.asString() + "=" + version);
				allSharded &= majorVersion(version) >= 7;
			}
		}
		SignalMode mode = (allSharded && !versions.isEmpty()) ? SHARDED : CLASSIC;
		logger.info("Lock release signals use " + ((mode == SHARDED) ? "sharded pub/sub (SPUBLISH/SSUBSCRIBE per slot)"
				: "classic pub/sub (a master runs Redis < 7)") + "; masters: " + versions);
		return mode;
	}

	private static int majorVersion(String version) {
		int dot = version.indexOf('.');
		try {
			return Integer.parseInt((dot > 0) ? version.substring(0, dot) : version);
		}
		catch (NumberFormatException ex) {
			return 0;
		}
	}

}
