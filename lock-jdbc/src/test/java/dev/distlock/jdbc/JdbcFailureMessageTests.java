package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockBackendException;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a failed call says, against real servers with HikariCP's default settings: a
 * stopped server is a refused connection (whether the pool had connected before or
 * never), a wrong password is a failed authentication, and no message carries a
 * placeholder for a lock that a call is not about.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Tag("server")
class JdbcFailureMessageTests {

	private static final Duration LONG = Duration.ofSeconds(30);

	private static final String TABLE = "message_lock";

	/** A server of this class's own, stopped by a test. */
	private static PostgresServer stoppable;

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@BeforeAll
	static void startServer() {
		stoppable = PostgresServer.start();
	}

	@AfterAll
	static void stopServer() {
		stoppable.close();
	}

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	/**
	 * A provider over a pool with HikariCP's default settings that starts at its first
	 * use, as Spring Boot makes it.
	 */
	private JdbcLockProvider provider(DatabaseServer server, String password) {
		return provider(server, password, null);
	}

	private JdbcLockProvider provider(DatabaseServer server, String password, @Nullable Duration storeTimeout) {
		HikariDataSource pool = new HikariDataSource();
		pool.setJdbcUrl(server.jdbcUrl());
		pool.setUsername(server.username());
		pool.setPassword(password);
		this.closeables.add(pool);
		JdbcLockProvider.Builder builder = JdbcLockProvider.builder(pool).tableName(TABLE);
		if (storeTimeout != null) {
			builder.storeTimeout(storeTimeout);
		}
		JdbcLockProvider provider = builder.build();
		this.closeables.add(provider);
		return provider;
	}

	/**
	 * The server stops while the application runs: the pool waits for a connection it
	 * cannot make, and the call that gives up on it at the store timeout says that the
	 * connection was refused. A pool started while the server is down says the same.
	 */
	@Test
	void aStoppedServerIsReportedAsARefusedConnection() {
		JdbcLockProvider running = provider(stoppable, stoppable.password());
		running.createTableIfMissing();
		assertThat(
				acquired(LockAttempt.join(running.tryLock(LockRequest.exclusive("before-the-stop", LONG)))).release())
			.isTrue();
		stoppable.stop();
		try {
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> LockAttempt.join(running.tryLock(LockRequest.exclusive("during-the-stop", LONG))))
				.satisfies((ex) -> assertThat(ex.getMessage()).containsIgnoringCase("connection refused")
					.contains("lock 'during-the-stop'")
					.contains("PostgreSQL"));
			// HikariCP opens its first connection inside the first call and, when that
			// fails, waits a second before saying why; on a busy machine that can outlast
			// the default store timeout, and what is tested here is what the pool says.
			JdbcLockProvider fresh = provider(stoppable, stoppable.password(), Duration.ofSeconds(20));
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(fresh::validateSchema)
				.satisfies((ex) -> assertThat(ex.getMessage()).containsIgnoringCase("connection refused")
					.contains("lock table '" + TABLE + "'")
					.doesNotContain("(none)"));
			// A store timeout shorter than that start says that the pool was starting.
			JdbcLockProvider starting = provider(stoppable, stoppable.password(), Duration.ofMillis(300));
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(starting::validateSchema)
				.satisfies((ex) -> assertThat(ex.getMessage())
					.contains("no connection from the pool in that time (it was still opening its first connection)"));
		}
		finally {
			stoppable.restart();
		}
	}

	/** A wrong password on PostgreSQL says that the authentication failed. */
	@Test
	void aWrongPasswordIsReportedAsAFailedAuthenticationOnPostgres() {
		assertAuthenticationFails(provider(PostgresServer.shared(), "wrong"));
	}

	/** A wrong password on MariaDB says that the authentication failed. */
	@Test
	void aWrongPasswordIsReportedAsAFailedAuthenticationOnMariaDb() {
		assertAuthenticationFails(provider(MariaDbServer.shared(), "wrong"));
	}

	private static void assertAuthenticationFails(JdbcLockProvider provider) {
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(provider::validateSchema)
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("authentication failed")
				.contains("lock table '" + TABLE + "'")
				.doesNotContain("(none)"));
		assertThatExceptionOfType(LockBackendException.class)
			.isThrownBy(() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive("k", LONG))))
			.satisfies((ex) -> assertThat(ex.getMessage()).contains("authentication failed"));
	}

}
