package dev.distlock.autoconfigure.endpoint;

import dev.distlock.LeaderElections;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.leader.DistributedLockLeaderAutoConfiguration;
import dev.distlock.support.DefaultLockTemplate;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * The read-only {@code distributedlocks} Actuator endpoint, when Spring Boot's Actuator
 * is on the class path and the endpoint is available (exposed and not disabled, as Boot
 * decides for every endpoint). Without the Actuator this does nothing.
 */
@AutoConfiguration(after = { DistributedLockAutoConfiguration.class, DistributedLockLeaderAutoConfiguration.class })
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(LockTemplate.class)
@ConditionalOnAvailableEndpoint(DistributedLocksEndpoint.class)
@EnableConfigurationProperties(DistributedLocksEndpointProperties.class)
public final class DistributedLocksEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	RecentLockLosses distributedLockRecentLosses() {
		return new RecentLockLosses();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(DefaultLockTemplate.class)
	DistributedLocksEndpoint distributedLocksEndpoint(DefaultLockTemplate template, RecentLockLosses losses,
			DistributedLocksEndpointProperties properties, ObjectProvider<LeaderElections> elections) {
		return new DistributedLocksEndpoint(template, losses, properties.getShowValues(), properties.getRoles(),
				elections.getIfUnique());
	}

}
