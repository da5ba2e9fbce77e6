package dev.distlock.autoconfigure.reactive;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.reactive.DefaultReactiveLockTemplate;
import dev.distlock.reactive.ReactiveLockTemplate;
import dev.distlock.support.DefaultLockTemplate;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@link ReactiveLockTemplate} over the lock template, when Reactor is on the class
 * path and the lock template is the library's own: the same locks, defaults, observers
 * and loss events as the blocking and asynchronous templates. Backs off from the
 * application's own.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnClass(Mono.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
public final class DistributedLockReactiveAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(ReactiveLockTemplate.class)
	@ConditionalOnBean(DefaultLockTemplate.class)
	DefaultReactiveLockTemplate distributedReactiveLockTemplate(DefaultLockTemplate distributedLockTemplate) {
		return new DefaultReactiveLockTemplate(distributedLockTemplate);
	}

}
