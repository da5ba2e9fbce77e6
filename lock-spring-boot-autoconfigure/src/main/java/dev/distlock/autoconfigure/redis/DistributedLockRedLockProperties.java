package dev.distlock.autoconfigure.redis;

import java.util.ArrayList;
import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of RedLock ({@code distributed-lock.redis.redlock.*}): locks over several
 * independent Redis masters instead of the application's Redis connection. Naming the
 * masters turns it on; see docs/redlock.md for what it guarantees and what it does not.
 */
@ConfigurationProperties("distributed-lock.redis.redlock")
public class DistributedLockRedLockProperties {

	/**
	 * Independent Redis masters to lock on, as URLs
	 * (redis://[user:password@]host:port[/db], rediss:// for TLS): at least 3, each a
	 * different server with no replication between them. A lock is held when a majority
	 * of them granted it. Setting this makes the redlock store available; select it with
	 * distributed-lock.store=redlock when the application also has a Redis connection.
	 */
	private List<String> nodes = new ArrayList<>();

	/**
	 * Prefix of every RedLock key on each master; each master's fencing counter is the
	 * key named by the prefix itself. Must not be empty.
	 */
	private String keyPrefix = "redlock:";

	public List<String> getNodes() {
		return this.nodes;
	}

	public void setNodes(List<String> nodes) {
		this.nodes = nodes;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

}
