package dev.distlock.autoconfigure.metrics;

import java.util.List;

import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.DistributedLockProperties;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Binds {@link DistributedLockMetrics} to every {@link MeterRegistry} when Micrometer is
 * on the class path (Spring Boot's {@code spring-boot-micrometer-metrics} binds every
 * {@code MeterBinder} bean). Without Micrometer this does nothing.
 */
@AutoConfiguration(before = DistributedLockAutoConfiguration.class,
		afterName = { "org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration",
				"org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration" })
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
public final class DistributedLockMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	DistributedLockMetrics distributedLockMetrics(ObjectProvider<LockTemplate> template,
			ObjectProvider<RenewalScheduler> scheduler, ObjectProvider<DistributedLockProperties> properties) {
		DistributedLockProperties configured = properties.getIfAvailable();
		return new DistributedLockMetrics(
				() -> (template.getIfUnique() instanceof DefaultLockTemplate managed) ? managed : null,
				scheduler::getIfUnique, (configured != null) ? configured.getLocks().keySet() : List.of());
	}

}
