package dev.distlock.autoconfigure.zookeeper;

import java.time.Duration;

import dev.distlock.autoconfigure.ConditionalOnLockStore;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.autoconfigure.LockStoreCandidate;
import dev.distlock.spi.LockProvider;
import dev.distlock.zookeeper.ZookeeperLockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.core.log.LogMessage;

/**
 * The ZooKeeper store: a {@link ZookeeperLockProvider} over the application's
 * {@link CuratorFramework}, or over one built and started from
 * {@code distributed-lock.zookeeper.*} when the application has none, when
 * {@code lock-zookeeper} and Curator are on the class path, one of the two exists, and
 * {@code distributed-lock.store} is unset or {@code zookeeper}.
 */
@AutoConfiguration(before = DistributedLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnClass({ ZookeeperLockProvider.class, CuratorFramework.class })
@Conditional(DistributedLockZookeeperAutoConfiguration.ClientOrConnectString.class)
@ConditionalOnLockStore("zookeeper")
@EnableConfigurationProperties(DistributedLockZookeeperProperties.class)
public final class DistributedLockZookeeperAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockZookeeperAutoConfiguration.class);

	@Bean
	LockStoreCandidate distributedLockZookeeperStore() {
		return new LockStoreCandidate("zookeeper");
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	CuratorFramework distributedLockCuratorFramework(DistributedLockZookeeperProperties zookeeper) {
		String connectString = zookeeper.getConnectString();
		if (connectString == null || connectString.isBlank()) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.zookeeper.connect-string",
					connectString, "Name the ZooKeeper servers as host:port pairs separated by commas.");
		}
		int sessionTimeout = millis("distributed-lock.zookeeper.session-timeout", zookeeper.getSessionTimeout());
		int connectionTimeout = millis("distributed-lock.zookeeper.connection-timeout",
				zookeeper.getConnectionTimeout());
		int baseSleep = millis("distributed-lock.zookeeper.retry.base-sleep-time",
				zookeeper.getRetry().getBaseSleepTime());
		int maxRetries = zookeeper.getRetry().getMaxRetries();
		if (maxRetries < 0 || maxRetries > 29) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.zookeeper.retry.max-retries",
					maxRetries, "The value must be between 0 and 29 (Curator's limit for exponential backoff).");
		}
		CuratorFramework client = CuratorFrameworkFactory.builder()
			.connectString(connectString)
			.sessionTimeoutMs(sessionTimeout)
			.connectionTimeoutMs(connectionTimeout)
			.retryPolicy(new ExponentialBackoffRetry(baseSleep, maxRetries))
			.build();
		client.start();
		return client;
	}

	@Bean
	@ConditionalOnMissingBean
	LockProvider distributedLockProvider(ObjectProvider<CuratorFramework> clients,
			DistributedLockZookeeperProperties zookeeper, DistributedLockProperties properties) {
		CuratorFramework client = clients.getIfUnique();
		if (client == null) {
			throw new IllegalStateException("The distributed-lock ZooKeeper store needs one CuratorFramework, but the"
					+ " application has several and none is @Primary: mark the one for locks @Primary, or define a"
					+ " LockProvider bean (new ZookeeperLockProvider(client, ...)) over the one you choose");
		}
		Duration storeTimeout = properties.getStoreTimeout();
		if (storeTimeout.isNegative() || storeTimeout.toMillis() < 1) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.store-timeout", storeTimeout,
					"The value must be at least 1ms.");
		}
		String basePath = zookeeper.getBasePath();
		if (basePath == null || !basePath.startsWith("/") || (basePath.length() > 1 && basePath.endsWith("/"))
				|| basePath.contains("//")) {
			throw new InvalidConfigurationPropertyValueException("distributed-lock.zookeeper.base-path", basePath,
					"The base path must be absolute ('/distributed-lock'), with no empty segment and no trailing '/'.");
		}
		ZookeeperLockProvider provider = new ZookeeperLockProvider(client, basePath, storeTimeout);
		logger.info(LogMessage.format("Distributed locks use ZooKeeper at %s (base path '%s', store timeout %dms)",
				client.getZookeeperClient().getCurrentConnectionString(), basePath, storeTimeout.toMillis()));
		return provider;
	}

	private static int millis(String property, Duration value) {
		if (value == null || value.isNegative() || value.toMillis() < 1 || value.toMillis() > Integer.MAX_VALUE) {
			throw new InvalidConfigurationPropertyValueException(property, value,
					"The value must be at least 1ms and at most " + Integer.MAX_VALUE + "ms.");
		}
		return (int) value.toMillis();
	}

	/**
	 * The store is available when the application has a Curator client or names the
	 * servers.
	 */
	static final class ClientOrConnectString extends AnyNestedCondition {

		ClientOrConnectString() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnBean(type = "org.apache.curator.framework.CuratorFramework")
		static final class ClientBean {

		}

		@ConditionalOnProperty("distributed-lock.zookeeper.connect-string")
		static final class ConnectString {

		}

	}

}
