package dev.distlock.testsupport;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.distlock.LockOptions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import static org.assertj.core.api.Assertions.fail;

/**
 * Templates over a store under test, one per simulated JVM, and the attempt helpers the
 * family contract suites share. The retry interval is a minute, so that a waiter that
 * polled instead of being woken by a signal would fail its test by timing out.
 */
final class ContractTemplates implements AutoCloseable {

	static final Duration RETRY = Duration.ofMinutes(1);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	/** A template with the given lease, a 20 s wait and a retry interval of a minute. */
	DefaultLockTemplate template(LockProvider provider, Duration leaseTime) {
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(20))
					.leaseTime(leaseTime)
					.autoRenew(true)
					.retryInterval(RETRY)
					.build());
		this.closeables.add(template);
		this.closeables.add(scheduler);
		return template;
	}

	@Override
	public void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	static LockHandle acquired(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			return acquired.handle();
		}
		return fail("expected an acquisition but was " + attempt);
	}

	static void assertBusy(String what, LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			acquired.handle().release();
			fail("expected busy but was acquired: " + what);
		}
	}

	/** Retries until acquired, within the short lease plus five seconds. */
	static LockHandle awaitAcquired(String what, Duration shortLease, Supplier<LockAttempt> attempt) {
		long deadline = System.nanoTime() + shortLease.plusSeconds(5).toNanos();
		while (System.nanoTime() - deadline < 0) {
			if (attempt.get() instanceof LockAttempt.Acquired acquired) {
				return acquired.handle();
			}
			LockSupport.parkNanos(1_000_000);
		}
		return fail("not acquired in time: " + what);
	}

}
