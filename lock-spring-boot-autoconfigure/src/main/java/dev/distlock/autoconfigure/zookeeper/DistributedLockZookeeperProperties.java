package dev.distlock.autoconfigure.zookeeper;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the ZooKeeper store ({@code distributed-lock.zookeeper.*}). The connection
 * settings are used only when the application has no {@code CuratorFramework} bean of its
 * own: the store then builds and starts one.
 */
@ConfigurationProperties("distributed-lock.zookeeper")
public class DistributedLockZookeeperProperties {

	/**
	 * ZooKeeper servers to connect to, as host:port pairs separated by commas, with an
	 * optional chroot path at the end. Used only when the application defines no
	 * CuratorFramework bean; the ZooKeeper store is available when either exists.
	 */
	private @Nullable String connectString;

	/**
	 * Session timeout asked of the servers (they bound it between 2 and 20 ticks). The
	 * session is every lock's lease: a holder that stops heartbeating loses its locks
	 * after this long.
	 */
	private Duration sessionTimeout = Duration.ofSeconds(60);

	/** How long Curator waits to establish a connection. */
	private Duration connectionTimeout = Duration.ofSeconds(15);

	/**
	 * Parent node of every lock key's node: absolute, with no trailing '/'. Each key gets
	 * a container node under it, removed by the servers when idle.
	 */
	private String basePath = "/distributed-lock";

	private final Retry retry = new Retry();

	public @Nullable String getConnectString() {
		return this.connectString;
	}

	public void setConnectString(@Nullable String connectString) {
		this.connectString = connectString;
	}

	public Duration getSessionTimeout() {
		return this.sessionTimeout;
	}

	public void setSessionTimeout(Duration sessionTimeout) {
		this.sessionTimeout = sessionTimeout;
	}

	public Duration getConnectionTimeout() {
		return this.connectionTimeout;
	}

	public void setConnectionTimeout(Duration connectionTimeout) {
		this.connectionTimeout = connectionTimeout;
	}

	public String getBasePath() {
		return this.basePath;
	}

	public void setBasePath(String basePath) {
		this.basePath = basePath;
	}

	public Retry getRetry() {
		return this.retry;
	}

	/**
	 * Curator's retry policy for the client the store builds: exponential backoff
	 * ({@code ExponentialBackoffRetry}). Every lock call is bounded by
	 * distributed-lock.store-timeout all the same.
	 */
	public static class Retry {

		/**
		 * Pause before the first retry of an operation; doubled (with jitter) after each.
		 */
		private Duration baseSleepTime = Duration.ofMillis(100);

		/**
		 * How many times Curator retries an operation that failed on a connection loss.
		 */
		private int maxRetries = 5;

		public Duration getBaseSleepTime() {
			return this.baseSleepTime;
		}

		public void setBaseSleepTime(Duration baseSleepTime) {
			this.baseSleepTime = baseSleepTime;
		}

		public int getMaxRetries() {
			return this.maxRetries;
		}

		public void setMaxRetries(int maxRetries) {
			this.maxRetries = maxRetries;
		}

	}

}
