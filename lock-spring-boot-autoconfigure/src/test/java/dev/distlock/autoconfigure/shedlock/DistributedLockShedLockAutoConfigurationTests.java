package dev.distlock.autoconfigure.shedlock;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.shedlock.DistlockShedLockProvider;
import net.javacrumbs.shedlock.core.LockAssert;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.LockProvider;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class DistributedLockShedLockAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(
				AutoConfigurations.of(AopAutoConfiguration.class, DistributedLockInMemoryAutoConfiguration.class,
						DistributedLockAutoConfiguration.class, DistributedLockShedLockAutoConfiguration.class))
		.withPropertyValues("distributed-lock.store=in-memory");

	@Test
	void exposesTheBridgeAsShedLocksProvider() {
		this.runner.run((context) -> assertThat(context).getBean(LockProvider.class)
			.isInstanceOf(DistlockShedLockProvider.class));
	}

	@Test
	void backsOffWhenTheApplicationDefinesAShedLockProvider() {
		this.runner.withUserConfiguration(OwnShedLockProvider.class)
			.run((context) -> assertThat(context).hasSingleBean(LockProvider.class)
				.doesNotHaveBean(DistlockShedLockProvider.class));
	}

	@Test
	void backsOffWithoutShedLock() {
		this.runner.withClassLoader(new FilteredClassLoader(LockProvider.class))
			.run((context) -> assertThat(context).doesNotHaveBean(DistlockShedLockProvider.class)
				.hasSingleBean(LockTemplate.class));
	}

	@Test
	void backsOffWhenDistributedLocksAreOff() {
		this.runner.withPropertyValues("distributed-lock.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DistlockShedLockProvider.class));
	}

	@Test
	void schedulerLockJobsLockInTheDistlockStoreUnderTheSameKeys() {
		this.runner.withUserConfiguration(Jobs.class).run((context) -> {
			NightlyReport report = context.getBean(NightlyReport.class);
			report.run();
			report.run();
			assertThat(report.tokens()).hasSize(2).isSorted().doesNotHaveDuplicates();
			LockTemplate template = context.getBean(LockTemplate.class);
			try (Lease held = template.acquire("nightly-report",
					LockOptions.builder().waitTime(Duration.ZERO).build())) {
				report.run();
			}
			assertThat(report.tokens()).as("skipped while @DistributedLock holds the key").hasSize(2);
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnShedLockProvider {

		@Bean
		LockProvider ownShedLockProvider() {
			return (LockConfiguration configuration) -> Optional.<SimpleLock>empty();
		}

	}

	@Configuration(proxyBeanMethods = false)
	@EnableSchedulerLock(defaultLockAtMostFor = "1m")
	static class Jobs {

		@Bean
		NightlyReport nightlyReport() {
			return new NightlyReport();
		}

	}

	static class NightlyReport {

		private final List<Long> tokens = new ArrayList<>();

		public List<Long> tokens() {
			return this.tokens;
		}

		@SchedulerLock(name = "nightly-report")
		public void run() {
			LockAssert.assertLocked();
			this.tokens.add(LockContext.current().orElseThrow().fencingToken());
		}

	}

}
