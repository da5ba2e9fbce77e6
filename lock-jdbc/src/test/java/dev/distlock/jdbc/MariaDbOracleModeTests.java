package dev.distlock.jdbc;

import java.time.Duration;
import java.util.UUID;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read locks and semaphores on a MariaDB server whose sessions run in {@code ORACLE}
 * mode, which parses compound statements as PL/SQL: they work as anywhere else, sending
 * their statements one by one.
 */
@Tag("server")
class MariaDbOracleModeTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private HikariDataSource pool;

	private JdbcLockProvider provider;

	@BeforeEach
	void start() {
		MariaDbServer server = MariaDbServer.shared();
		this.pool = new HikariDataSource();
		String url = server.jdbcUrl();
		this.pool.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "sessionVariables=sql_mode=ORACLE");
		this.pool.setUsername(server.username());
		this.pool.setPassword(server.password());
		this.provider = new JdbcLockProvider(this.pool, "oracle_mode_lock");
		this.provider.createTableIfMissing();
	}

	@AfterEach
	void stop() {
		this.provider.close();
		this.pool.close();
	}

	@Test
	void readLocksWorkAndExcludeWriters() {
		String key = "oracle-" + UUID.randomUUID();
		LockHandle first = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LEASE))));
		LockHandle second = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LEASE))));
		assertThat(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LEASE))))
			.as("a writer while two readers hold the key")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(first.release()).isTrue();
		assertThat(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LEASE))))
			.as("a writer while one reader holds the key")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(second.release()).isTrue();
		LockHandle writer = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LEASE))));
		assertThat(writer.fencingToken()).isGreaterThan(second.fencingToken());
		assertThat(writer.release()).isTrue();
	}

	@Test
	void permitsWorkAndAreCounted() {
		String key = "oracle-" + UUID.randomUUID();
		LockHandle first = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LEASE))));
		LockHandle second = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LEASE))));
		assertThat(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LEASE))))
			.as("a third permit of two")
			.isInstanceOf(LockAttempt.Busy.class);
		assertThat(second.release()).isTrue();
		LockHandle third = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LEASE))));
		assertThat(third.fencingToken()).isGreaterThan(second.fencingToken());
		assertThat(third.release()).isTrue();
		assertThat(first.release()).isTrue();
	}

}
