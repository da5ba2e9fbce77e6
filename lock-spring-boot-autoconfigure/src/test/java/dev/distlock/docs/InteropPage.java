package dev.distlock.docs;

import java.time.Duration;
import java.util.concurrent.locks.Lock;

import dev.distlock.KeyLock;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.integration.DistlockLockRegistry;
import net.javacrumbs.shedlock.spring.annotation.EnableSchedulerLock;
import net.javacrumbs.shedlock.spring.annotation.SchedulerLock;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.integration.support.leader.LockRegistryLeaderInitiator;
import org.springframework.scheduling.annotation.EnableScheduling;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;

/**
 * The code of {@code docs/interop.md}.
 */
class InteropPage {

	LockTemplate lockTemplate;

	// @formatter:off
	@Configuration
	@EnableScheduling
	@EnableSchedulerLock(defaultLockAtMostFor = "10m")
	class SchedulingConfig {
	}

	@Component
	class Reports {

		@Scheduled(cron = "0 0 2 * * *")
		@SchedulerLock(name = "nightly-report", lockAtLeastFor = "1m")
		void nightlyReport() {
			long token = LockContext.current().orElseThrow().fencingToken();   // distlock's fencing token
			write(token);
		}
	}
	// @formatter:on

	void invoice(long id) {
		// @formatter:off
		Lock lock = KeyLock.of(lockTemplate, "invoice:" + id);              // configured lease and auto-renew
		Lock shortLease = KeyLock.of(lockTemplate, "invoice:" + id, LockOptions.builder().leaseTime(Duration.ofSeconds(10)).build());

		lock.lock();
		try {
			write(id);
		}
		finally {
			lock.unlock();
		}
		// @formatter:on
	}

	// @formatter:off
	@Bean
	DistlockLockRegistry lockRegistry(LockTemplate lockTemplate) {
		return new DistlockLockRegistry(lockTemplate);
	}

	@Bean
	LockRegistryLeaderInitiator leaderInitiator(DistlockLockRegistry lockRegistry) {
		return new LockRegistryLeaderInitiator(lockRegistry);
	}
	// @formatter:on

	void write(long token) {
	}

}
