package dev.distlock.autoconfigure.observation;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Observes every lock acquisition and hold with Micrometer when an
 * {@link ObservationRegistry} bean exists (Spring Boot's
 * {@code spring-boot-micrometer-observation} makes one). Without Micrometer on the class
 * path this does nothing. Users replace the conventions by defining a
 * {@link LockAcquireObservationConvention} or {@link LockHoldObservationConvention} bean,
 * and turn the observations off with
 * {@code management.observations.enable.distributed.lock=false}.
 */
@AutoConfiguration(before = DistributedLockAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass(ObservationRegistry.class)
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
public final class DistributedLockObservationAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ObservationLockObserver distributedLockObservationObserver(ObservationRegistry registry,
			ObjectProvider<LockAcquireObservationConvention> acquireConvention,
			ObjectProvider<LockHoldObservationConvention> holdConvention) {
		return new ObservationLockObserver(registry, acquireConvention.getIfUnique(), holdConvention.getIfUnique());
	}

}
