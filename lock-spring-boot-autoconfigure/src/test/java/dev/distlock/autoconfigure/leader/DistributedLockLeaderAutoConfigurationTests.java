package dev.distlock.autoconfigure.leader;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderGrantedEvent;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderOnly;
import dev.distlock.LeaderRevokedEvent;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.endpoint.DistributedLocksEndpoint;
import dev.distlock.autoconfigure.endpoint.DistributedLocksEndpointAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.contract.Conditions;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.leader.event.AbstractLeaderEvent;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;

import static org.assertj.core.api.Assertions.assertThat;

class DistributedLockLeaderAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DistributedLockInMemoryAutoConfiguration.class,
				DistributedLockAutoConfiguration.class, DistributedLockLeaderAutoConfiguration.class,
				DistributedLocksEndpointAutoConfiguration.class))
		.withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.leader.instance-id=node-1",
				"management.endpoints.web.exposure.include=distributedlocks")
		.withUserConfiguration(Recording.class);

	@Test
	void noElectionConfiguredCampaignsForNothing() {
		this.runner.run((context) -> assertThat(context.getBean(LeaderElections.class).elections()).isEmpty());
	}

	@Test
	void theConfiguredElectionIsGrantedWithEventsEndpointAndMetrics() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s")
			.run((context) -> {
				LeaderElection reports = context.getBean(LeaderElections.class).get("reports");
				Recording recording = context.getBean(Recording.class);
				Conditions.await("granted", Duration.ofSeconds(10), reports::isLeader);
				Conditions.await("events", Duration.ofSeconds(10), () -> recording.events.size() == 2);
				assertThat(recording.events).hasExactlyElementsOfTypes(LeaderGrantedEvent.class, OnGrantedEvent.class);
				long token = ((LeaderGrantedEvent) recording.events.get(0)).getToken();
				assertThat(reports.currentToken()).hasValue(token);
				assertThat(((AbstractLeaderEvent) recording.events.get(1)).getRole()).isEqualTo("reports");
				assertThat(recording.listened).containsExactly("granted reports " + token);

				DistributedLocksEndpoint.LocksDescriptor locks = context.getBean(DistributedLocksEndpoint.class)
					.locks(SecurityContext.NONE);
				assertThat(locks.leaderElections())
					.containsExactly(new DistributedLocksEndpoint.LeaderDescriptor("reports", "node-1", true, token));

				SimpleMeterRegistry registry = new SimpleMeterRegistry();
				context.getBean(LeaderMetrics.class).bindTo(registry);
				assertThat(registry.get("distlock.leader").tag("election", "reports").gauge().value()).isEqualTo(1);
				assertThat(registry.get("distlock.leader.token").tag("election", "reports").gauge().value())
					.isEqualTo(token);

				reports.yield();
				Conditions.await("revoked", Duration.ofSeconds(10), () -> recording.events.size() == 4);
				assertThat(recording.events.get(2)).isInstanceOfSatisfying(LeaderRevokedEvent.class,
						(revoked) -> assertThat(revoked.getReason()).isEqualTo(LeaderListener.Reason.YIELDED));
				assertThat(recording.events.get(3)).isInstanceOf(OnRevokedEvent.class);
				assertThat(registry.get("distlock.leader").tag("election", "reports").gauge().value()).isEqualTo(0);
			});
	}

	@Test
	void aLeaderOnlyMethodRunsOnlyWhileThisInstanceLeads() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s")
			.withUserConfiguration(Job.class)
			.run((context) -> {
				LeaderElection reports = context.getBean(LeaderElections.class).get("reports");
				Job job = context.getBean(Job.class);
				Conditions.await("granted", Duration.ofSeconds(10), reports::isLeader);
				job.run();
				assertThat(job.runs()).isEqualTo(1);
				reports.yield();
				job.run();
				assertThat(job.runs()).as("skipped after the yield").isEqualTo(1);
			});
	}

	@Test
	void shutdownRevokesTheLeaderAndReleasesTheRole() {
		Recording[] seen = new Recording[1];
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s")
			.run((context) -> {
				LeaderElection reports = context.getBean(LeaderElections.class).get("reports");
				Conditions.await("granted", Duration.ofSeconds(10), reports::isLeader);
				seen[0] = context.getBean(Recording.class);
			});
		assertThat(seen[0].events).filteredOn(LeaderRevokedEvent.class::isInstance)
			.singleElement()
			.satisfies((event) -> assertThat(((LeaderRevokedEvent) event).getReason())
				.isEqualTo(LeaderListener.Reason.SHUTDOWN));
	}

	@Test
	void aRenewDeadlineNotShorterThanTheLeaseFailsStartupNamingTheProperty() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=10s",
					"distributed-lock.leader.elections.reports.renew-deadline=10s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("distributed-lock.leader.elections.reports.renew-deadline")
				.hasMessageContaining("must be shorter than distributed-lock.leader.elections.reports.lease-time"));
	}

	@Test
	void aDisabledElectionIsNotJoined() {
		this.runner.withPropertyValues("distributed-lock.leader.elections.reports.enabled=false")
			.run((context) -> assertThat(context.getBean(LeaderElections.class).get("reports")).isNull());
	}

	@Test
	void eachElectionIsABeanQualifiedByItsName() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s",
					"distributed-lock.leader.elections.billing.lease-time=3s",
					"distributed-lock.leader.elections.billing.renew-deadline=2s",
					"distributed-lock.leader.elections.archive.enabled=false")
			.withUserConfiguration(ByName.class)
			.run((context) -> {
				LeaderElections elections = context.getBean(LeaderElections.class);
				assertThat(context.getBeansOfType(LeaderElection.class)).containsOnlyKeys("reportsLeaderElection",
						"billingLeaderElection");
				Injected injected = context.getBean(Injected.class);
				assertThat(injected.first()).isSameAs(elections.get("reports"));
				assertThat(injected.second()).isSameAs(elections.get("billing"));
				Conditions.await("granted", Duration.ofSeconds(10), injected.first()::isLeader);
			});
	}

	@Test
	void theOnlyElectionIsInjectedByType() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s")
			.withUserConfiguration(ByType.class)
			.run((context) -> assertThat(context.getBean(Injected.class).first())
				.isSameAs(context.getBean(LeaderElections.class).get("reports")));
	}

	@Test
	void theApplicationsOwnBeanOfThatNameWins() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s")
			.withBean("reportsLeaderElection", String.class, () -> "mine")
			.run((context) -> {
				assertThat(context.getBean("reportsLeaderElection")).isEqualTo("mine");
				assertThat(context.getBeansOfType(LeaderElection.class)).isEmpty();
				assertThat(context.getBean(LeaderElections.class).get("reports")).isNotNull();
			});
	}

	@Test
	void anElectionMissingFromTheApplicationsOwnElectionsFailsStartupNamingIt() {
		this.runner
			.withPropertyValues("distributed-lock.leader.elections.reports.lease-time=3s",
					"distributed-lock.leader.elections.reports.renew-deadline=2s")
			.withUserConfiguration(OwnElections.class, ByType.class)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("The LeaderElections bean has no election 'reports'"));
	}

	record Injected(LeaderElection first, LeaderElection second) {
	}

	@Configuration(proxyBeanMethods = false)
	static class ByName {

		@Bean
		Injected injected(@Qualifier("reports") LeaderElection reports, @Qualifier("billing") LeaderElection billing) {
			return new Injected(reports, billing);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class OwnElections {

		@Bean
		LeaderElections ownElections(LockTemplate template) {
			return new LeaderElections(template, "own");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ByType {

		@Bean
		Injected injected(LeaderElection election) {
			return new Injected(election, election);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Recording {

		final List<ApplicationEvent> events = new CopyOnWriteArrayList<>();

		final List<String> listened = new CopyOnWriteArrayList<>();

		@Bean
		ApplicationListener<ApplicationEvent> leaderEvents() {
			return (event) -> {
				if (event instanceof LeaderGrantedEvent || event instanceof LeaderRevokedEvent
						|| event instanceof AbstractLeaderEvent) {
					this.events.add(event);
				}
			};
		}

		@Bean
		LeaderListener userListener() {
			return new LeaderListener() {
				@Override
				public void granted(LeaderElection election, long token) {
					Recording.this.listened.add("granted " + election.name() + " " + token);
				}
			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Job {

		final AtomicInteger runs = new AtomicInteger();

		@LeaderOnly("reports")
		public void run() {
			this.runs.incrementAndGet();
		}

		public int runs() {
			return this.runs.get();
		}

	}

}
