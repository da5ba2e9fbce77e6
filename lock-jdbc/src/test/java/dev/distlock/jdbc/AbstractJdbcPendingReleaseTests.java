package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.OnLeaseLost;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A release that fails while the database is down ({@code kill -9}; the row survives the
 * crash) is tried again once the database is back, so another JVM gets the lock soon
 * after, not at the end of the lease. Every setting is a default: the template's (lease
 * 30 s, wait 5 s, retry interval 100 ms), the store's (store timeout 3 s) and the pool's.
 * Each template has its own pool and provider, as a JVM of its own would.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
abstract class AbstractJdbcPendingReleaseTests {

	/** The configuration's defaults ({@code distributed-lock.*}). */
	private static final LockOptions DEFAULTS = LockOptions.builder()
		.waitTime(Duration.ofSeconds(5))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(100))
		.onLeaseLost(OnLeaseLost.FAIL_ON_EXIT)
		.build();

	private static final Duration LEASE = DEFAULTS.leaseTime();

	private static final String TABLE = "pending_release_lock";

	/** Closed last-opened first: a template before its scheduler, provider and pool. */
	private final Deque<AutoCloseable> closeables = new ArrayDeque<>();

	private DatabaseServer server;

	abstract DatabaseServer startServer();

	@BeforeAll
	void start() {
		this.server = startServer();
	}

	@AfterEach
	void close() throws Exception {
		while (!this.closeables.isEmpty()) {
			this.closeables.pop().close();
		}
	}

	@AfterAll
	void closeServer() {
		if (this.server != null) {
			this.server.close();
		}
	}

	/** A JVM's template: its own pool, provider and scheduler, every setting default. */
	private DefaultLockTemplate newJvm() {
		HikariDataSource dataSource = this.server.newDataSource();
		this.closeables.push(dataSource);
		JdbcLockProvider provider = new JdbcLockProvider(dataSource, TABLE);
		this.closeables.push(provider);
		provider.createTableIfMissing();
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.push(scheduler);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler, DEFAULTS);
		this.closeables.push(template);
		return template;
	}

	/**
	 * The holder's release fails within the store timeout while the database is down, and
	 * a waiter of the holder's JVM gets the store's failure, not the message of a busy
	 * lock. Once the database is back, another JVM acquires the lock within about one
	 * retry, while the lease still had most of its time to run, and the holder's JVM has
	 * no release left pending.
	 */
	@Test
	void aLockWhoseReleaseFailedWhileTheDatabaseWasDownIsFreeSoonAfterItIsBack() {
		DefaultLockTemplate jvm = newJvm();
		DefaultLockTemplate other = newJvm();
		String key = "pending-" + UUID.randomUUID();
		long asked = System.nanoTime();
		Lease lease = jvm.acquire(key, LockOptions.defaults());
		this.server.kill();
		long releasing = System.nanoTime();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(lease::release);
		// The store timeout, with room for a loaded machine.
		assertThat(since(releasing)).as("time the failed release took").isLessThan(Duration.ofSeconds(10));
		assertThat(jvm.pendingReleases()).isOne();
		// The database cannot say whether the key is busy while it is down: a waiter is
		// told of the store's failure. (The pending-release message needs a database
		// that answers "busy", and once it answers, the next retry gets the release
		// through.)
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> jvm.acquire(key, LockOptions.defaults()))
			.withMessageNotContaining("not acquired within");
		this.server.restart();
		long back = System.nanoTime();
		Duration leaseLeft = LEASE.minus(Duration.ofNanos(back - asked));
		assertThat(leaseLeft).as("lease left in the database when it was back").isGreaterThan(Duration.ofSeconds(15));
		try (Lease next = acquireOnceTheDatabaseAnswers(other, key)) {
			assertThat(since(back)).as("time until another JVM acquired after the database was back")
				.isLessThan(Duration.ofSeconds(10));
			assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
		}
		// The retry hears of its success just after the database released the lock.
		Conditions.await("the retried release done", Duration.ofSeconds(10), () -> jvm.pendingReleases() == 0);
	}

	/**
	 * Acquires {@code key} waiting up to a lease, trying again while {@code jvm}'s pool
	 * has no connection to the database yet, as a caller would: after an outage the
	 * pool's default settings take a few seconds to connect again, and a call waiting for
	 * a connection fails after the store timeout.
	 */
	private static Lease acquireOnceTheDatabaseAnswers(DefaultLockTemplate jvm, String key) {
		long deadline = System.nanoTime() + LEASE.toNanos();
		while (true) {
			Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
			try {
				return jvm.acquire(key, LockOptions.builder().waitTime(left).build());
			}
			catch (LockBackendException ex) {
				if (deadline - System.nanoTime() <= 0) {
					throw ex;
				}
			}
		}
	}

	private static Duration since(long nanoTime) {
		return Duration.ofNanos(System.nanoTime() - nanoTime);
	}

}
