package dev.distlock.autoconfigure.shedlock;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.shedlock.DistlockShedLockProvider;
import dev.distlock.spi.LockProvider;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * ShedLock's {@code LockProvider} on the application's distlock store, when ShedLock and
 * {@code lock-shedlock} are on the class path and the application defines no ShedLock
 * provider of its own: {@code @SchedulerLock} jobs (with ShedLock's
 * {@code @EnableSchedulerLock}) then lock in the same store as {@code @DistributedLock},
 * under the same keys.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass({ net.javacrumbs.shedlock.core.LockProvider.class, DistlockShedLockProvider.class })
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnBean(LockProvider.class)
public final class DistributedLockShedLockAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(net.javacrumbs.shedlock.core.LockProvider.class)
	DistlockShedLockProvider distributedLockShedLockProvider(LockProvider store) {
		return new DistlockShedLockProvider(store);
	}

}
