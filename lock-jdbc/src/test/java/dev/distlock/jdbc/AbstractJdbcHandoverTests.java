package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.contract.AbstractLocalHandoverTests;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.TokenBlock;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.jdbc.core.JdbcTemplate;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Local hand-over on the JDBC store, with templates over providers and pools of their own
 * standing for JVMs, and hand-over on ({@link HandoverSettings#ON}): the store-neutral
 * tests of {@link AbstractLocalHandoverTests} (tokens rising across local passes and
 * JVMs, fewer statements than acquisitions, a remote waiter getting the lock while eight
 * threads hammer it), and the JDBC store's own: the acquire statement reserves the block,
 * an uncontended cycle still costs two statements, a lock handed over keeps being
 * renewed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
abstract class AbstractJdbcHandoverTests extends AbstractLocalHandoverTests {

	/** This class's own table on the shared server. */
	static final String TABLE = "handover_lock";

	private final List<AutoCloseable> closeables = new ArrayList<>();

	/** The server shared by this JVM's tests. */
	abstract DatabaseServer server();

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	private JdbcLockProvider provider() {
		HikariDataSource dataSource = server().newDataSource();
		this.closeables.add(dataSource);
		JdbcLockProvider provider = new JdbcLockProvider(dataSource, TABLE);
		this.closeables.add(provider);
		provider.createTableIfMissing();
		return provider;
	}

	/** A JVM's template: its own pool and provider, hand-over as given. */
	@Override
	protected DefaultLockTemplate newJvm(HandoverSettings handover) {
		return template(handover);
	}

	/** The row's owner cleared, as an operator's {@code UPDATE} or a lost write would. */
	@Override
	protected void loseLock(String key) {
		assertThat(new JdbcTemplate(server().dataSource())
			.update("UPDATE " + TABLE + " SET owner = NULL WHERE name = ?", key)).isOne();
	}

	@Override
	protected long storeCalls() {
		return server().statementCount(TABLE);
	}

	@Override
	protected String storeCallName() {
		return "statements";
	}

	private DefaultLockTemplate template(HandoverSettings handover) {
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		DefaultLockTemplate template = new DefaultLockTemplate(provider(), scheduler, OPTIONS, LeaseLossListener.NONE,
				true, LockObserver.NONE, handover);
		this.closeables.add(template);
		return template;
	}

	/**
	 * The acquire statement reserves the block: with the row's fence far ahead of the
	 * database's clock (so tokens come from the fence, not the clock), the token is the
	 * fence + 1, the row keeps the block's last, and the next acquisition's token, from
	 * another provider, lies past it. Renewal and release check that last token.
	 */
	@Test
	void theAcquireStatementReservesTheBlock() throws Exception {
		JdbcLockProvider provider = provider();
		JdbcLockProvider other = provider();
		String key = key();
		acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30))))).release();
		long ahead;
		try (Connection connection = server().dataSource().getConnection()) {
			// Eleven days ahead of the clock in microseconds.
			ahead = provider.dialect().clockMicros(connection) + 1_000_000_000_000L;
			try (PreparedStatement statement = connection
				.prepareStatement("UPDATE " + TABLE + " SET fence = ? WHERE name = ?")) {
				statement.setLong(1, ahead);
				statement.setString(2, key);
				assertThat(statement.executeUpdate()).isOne();
			}
		}
		TokenBlock block = (TokenBlock) acquired(
				LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30)).withTokens(33))));
		assertThat(block.fencingToken()).isEqualTo(ahead + 1);
		assertThat(block.lastToken()).isEqualTo(ahead + 33);
		assertThat(LockAttempt
			.join(other.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30)).withWaiting(true).withTokens(33))))
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(block.renew(Duration.ofSeconds(30))).isTrue();
		assertThat(block.release()).isTrue();
		assertThat(block.releasedToWaiters()).as("the other provider's waiting attempt marked the row").isTrue();
		TokenBlock next = (TokenBlock) acquired(
				LockAttempt.join(other.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30)))));
		assertThat(next.fencingToken()).isEqualTo(block.lastToken() + 1);
		assertThat(next.release()).isTrue();
		assertThat(next.releasedToWaiters()).as("nobody waited").isFalse();
	}

	/**
	 * With hand-over on and nobody else waiting, an uncontended cycle through the
	 * template is still two statements (acquire, release): the block costs none.
	 */
	@Test
	void anUncontendedCycleIsStillTwoStatements() {
		DefaultLockTemplate template = newJvm();
		String key = key();
		template.run(key, () -> {
		});
		int cycles = 50;
		long before = storeCalls();
		for (int i = 0; i < cycles; i++) {
			template.run(key, () -> {
			});
		}
		assertThat(storeCalls() - before).as("statements for %d uncontended cycles", cycles).isEqualTo(2L * cycles);
	}

	/**
	 * A lock handed over locally keeps its store lease: the new holder renews it, so
	 * that, held for two leases after the hand-over, the row stays its own (another
	 * provider finds it busy every time it asks) and it releases it as held. (A
	 * {@code max-time} of a minute: the second thread lines up after the first took the
	 * lock, which may take longer than the default 20 ms.)
	 */
	@Test
	void aLockHandedOverLocallyKeepsBeingRenewed() throws Exception {
		String key = key();
		DefaultLockTemplate template = template(new HandoverSettings(true, 32, Duration.ofMinutes(1)));
		JdbcLockProvider other = provider();
		LockOptions shortLease = LockOptions.builder().leaseTime(Duration.ofMillis(1500)).autoRenew(true).build();
		Lease first = template.acquire(key, shortLease);
		CompletableFuture<Lease> second = new CompletableFuture<>();
		Thread waiter = new Thread(() -> second.complete(template.acquire(key, shortLease)), "waiter");
		waiter.start();
		// Parked between attempts: in line for the lock this JVM holds.
		Conditions.await("the second thread waits in line", Duration.ofSeconds(10),
				() -> waiter.getState() == Thread.State.TIMED_WAITING);
		first.release();
		try (Lease handedOver = second.get(10, TimeUnit.SECONDS)) {
			assertThat(template.localHandovers()).isOne();
			assertThat(handedOver.fencingToken()).isEqualTo(first.fencingToken() + 1);
			long until = System.nanoTime() + Duration.ofMillis(3200).toNanos();
			int attempts = 0;
			while (System.nanoTime() < until) {
				assertThat(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30)))))
					.as("attempt %d of another provider", attempts)
					.isInstanceOf(LockAttempt.Busy.class);
				attempts++;
			}
			assertThat(handedOver.isHeld()).isTrue();
		}
	}

}
