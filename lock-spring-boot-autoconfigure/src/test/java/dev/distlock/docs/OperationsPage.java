package dev.distlock.docs;

import dev.distlock.DistributedLock;
import dev.distlock.OnFailure;

import org.springframework.scheduling.annotation.Scheduled;

/**
 * The code of {@code docs/operations.md}.
 */
class OperationsPage {

	// @formatter:off
	@Scheduled(cron = "0 0 * * * *")
	@DistributedLock(key = "'hourly-report'", onFailure = OnFailure.SKIP, waitTime = "0", minHoldTime = "5m")
	public void hourlyReport() { }
	// @formatter:on

}
