package dev.distlock.contract;

import java.time.Duration;

import dev.distlock.LockOptions;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

/**
 * Two lock templates on one store, as two JVMs would have, each with its own renewal
 * scheduler: what the family's contract suites lock with.
 */
final class TwoTemplates implements AutoCloseable {

	/** Waits 5 s, leases 30 s, renews, retries every 100 ms (the configured defaults). */
	static final LockOptions DEFAULTS = LockOptions.builder()
		.waitTime(Duration.ofSeconds(5))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(100))
		.build();

	private final RenewalScheduler firstScheduler = new RenewalScheduler();

	private final RenewalScheduler secondScheduler = new RenewalScheduler();

	final DefaultLockTemplate first;

	final DefaultLockTemplate second;

	private final java.util.List<DefaultLockTemplate> extra = new java.util.ArrayList<>();

	TwoTemplates(LockProvider provider, LockProvider other) {
		this.first = new DefaultLockTemplate(provider, this.firstScheduler, DEFAULTS);
		this.second = new DefaultLockTemplate(other, this.secondScheduler, DEFAULTS);
	}

	/**
	 * A template on {@code provider} that re-checks only every minute while waiting, so
	 * that a waiter it serves is woken by a signal or not at all within a test's time.
	 */
	DefaultLockTemplate slowRetry(LockProvider provider) {
		DefaultLockTemplate template = new DefaultLockTemplate(provider, this.firstScheduler,
				LockOptions.builder().retryInterval(Duration.ofMinutes(1)).build().orElse(DEFAULTS));
		this.extra.add(template);
		return template;
	}

	/** Renewal batches the first template's scheduler has sent. */
	long firstBatches() {
		return this.firstScheduler.batches();
	}

	@Override
	public void close() {
		this.first.close();
		this.second.close();
		this.extra.forEach(DefaultLockTemplate::close);
		this.firstScheduler.close();
		this.secondScheduler.close();
	}

	static LockOptions waiting(Duration waitTime) {
		return LockOptions.builder().waitTime(waitTime).build();
	}

}
