package dev.distlock.autoconfigure.inmemory;

import dev.distlock.autoconfigure.ConditionalOnLockStore;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.LockStoreCandidate;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The in-memory store, only when {@code distributed-lock.store} is {@code in-memory}:
 * locks within this JVM, for tests and single-instance applications. Never chosen by
 * default, so an application whose real store is missing fails instead of silently
 * locking per instance.
 */
@AutoConfiguration(before = DistributedLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnLockStore(value = "in-memory", byDefault = false)
public final class DistributedLockInMemoryAutoConfiguration {

	private static final Log logger = LogFactory.getLog(DistributedLockInMemoryAutoConfiguration.class);

	@Bean
	LockStoreCandidate distributedLockInMemoryStore() {
		return new LockStoreCandidate("in-memory");
	}

	@Bean
	@ConditionalOnMissingBean
	LockProvider distributedLockProvider() {
		logger.info("Distributed locks use the in-memory store: a lock excludes callers of this JVM only");
		return new InMemoryLockProvider();
	}

}
