package dev.distlock.autoconfigure.leader;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import dev.distlock.LeaderElections;
import dev.distlock.LeaderGrantedEvent;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderOnly;
import dev.distlock.LeaderRevokedEvent;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.integration.IntegrationLeaderEvents;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.aop.Advisor;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;

/**
 * Leader elections on the {@link LockTemplate}'s store, from
 * {@code distributed-lock.leader.elections.*}: a {@link LeaderElections} bean started and
 * stopped with the application, {@link LeaderGrantedEvent}/{@link LeaderRevokedEvent}
 * (and Spring Integration's leader events where it is present), every
 * {@link LeaderListener} bean told, {@link LeaderOnly} methods, Micrometer gauges, and a
 * {@link dev.distlock.LeaderElection} bean per election, qualified by its name.
 */
@AutoConfiguration(after = DistributedLockAutoConfiguration.class)
@ConditionalOnBooleanProperty(name = "distributed-lock.enabled", matchIfMissing = true)
@ConditionalOnBean(LockTemplate.class)
@EnableConfigurationProperties(DistributedLockLeaderProperties.class)
public final class DistributedLockLeaderAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	LeaderElections distributedLockLeaderElections(LockTemplate template, DistributedLockLeaderProperties properties,
			ApplicationEventPublisher publisher, ObjectProvider<LeaderListener> listeners) {
		String instanceId = properties.getInstanceId();
		LeaderElections elections = new LeaderElections(template,
				(instanceId != null) ? instanceId : LeaderElections.defaultInstanceId());
		List<LeaderListener> told = new ArrayList<>();
		told.add(new PublishedLeaderEvents(publisher));
		listeners.orderedStream().forEach(told::add);
		LeaderListener[] all = told.toArray(LeaderListener[]::new);
		for (Map.Entry<String, DistributedLockLeaderProperties.Election> entry : properties.getElections().entrySet()) {
			if (entry.getValue().isEnabled()) {
				elections.add(entry.getKey(), LeaderSettingsResolver.resolve(entry.getKey(), entry.getValue()), all);
			}
		}
		return elections;
	}

	@Bean
	static LeaderElectionBeans distributedLockLeaderElectionBeans(Environment environment) {
		return new LeaderElectionBeans(environment);
	}

	@Bean
	static LeaderElectionLifecycle distributedLockLeaderLifecycle(LeaderElections elections) {
		return new LeaderElectionLifecycle(elections);
	}

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static Advisor distributedLockLeaderOnlyAdvisor(ObjectProvider<LeaderElections> elections) {
		return new DefaultPointcutAdvisor(AnnotationMatchingPointcut.forMethodAnnotation(LeaderOnly.class),
				new LazyLeaderOnlyInterceptor(elections));
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		LeaderMetrics distributedLockLeaderMetrics(LeaderElections elections) {
			return new LeaderMetrics(elections);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = { "dev.distlock.integration.IntegrationLeaderEvents",
			"org.springframework.integration.leader.event.OnGrantedEvent" })
	static class IntegrationEventsConfiguration {

		@Bean
		IntegrationLeaderEvents distributedLockIntegrationLeaderEvents(ApplicationEventPublisher publisher) {
			return new IntegrationLeaderEvents(publisher);
		}

	}

	/** Publishes the elections' changes as application events. */
	private record PublishedLeaderEvents(ApplicationEventPublisher publisher) implements LeaderListener {

		@Override
		public void granted(dev.distlock.LeaderElection election, long token) {
			this.publisher.publishEvent(new LeaderGrantedEvent(election, token));
		}

		@Override
		public void revoked(dev.distlock.LeaderElection election, long token, Reason reason) {
			this.publisher.publishEvent(new LeaderRevokedEvent(election, token, reason));
		}

	}

}
