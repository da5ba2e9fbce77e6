package dev.distlock.harness.jdbc;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What every launcher must do, run against one server per test class. Each test uses
 * tables of its own.
 */
@Tag("server")
abstract class AbstractDatabaseServerTests {

	/**
	 * A thread per task: the common pool may run one task at a time (JDK 25, two cores).
	 */
	private static final Executor THREAD_PER_TASK = (task) -> {
		Thread thread = new Thread(task);
		thread.setDaemon(true);
		thread.start();
	};

	protected abstract DatabaseServer server();

	@Test
	void answersQueriesOnLoopbackAsDistlock() throws SQLException {
		DatabaseServer server = server();
		assertThat(server.jdbcUrl())
			.startsWith("jdbc:" + server.kind() + "://127.0.0.1:" + server.port() + "/distlock");
		assertThat(server.version()).matches("\\d+\\.\\d+.*");
		execute(server.dataSource(), "CREATE TABLE greeting (word VARCHAR(20))");
		execute(server.dataSource(), "INSERT INTO greeting VALUES ('hello')");
		assertThat(query(server.dataSource(), "SELECT word FROM greeting")).isEqualTo("hello");
	}

	@Test
	void keepsCommittedRowsAcrossKillAndRestart() throws SQLException {
		DatabaseServer server = server();
		execute(server.dataSource(), "CREATE TABLE survivor (id INT PRIMARY KEY)");
		execute(server.dataSource(), "INSERT INTO survivor VALUES (42)");
		long before = server.pid();
		int port = server.port();
		server.kill();
		assertThat(server.isAlive()).isFalse();
		assertThat(ProcessHandle.of(before).filter(ServerProcesses::isRunning)).isEmpty();
		server.restart();
		assertThat(server.port()).isEqualTo(port);
		assertThat(server.pid()).isNotEqualTo(before);
		// the pool recovers by itself on the same port
		assertThat(query(server.dataSource(), "SELECT id FROM survivor")).isEqualTo("42");
		server.stop();
		assertThat(server.isAlive()).isFalse();
		server.restart();
		assertThat(query(server.dataSource(), "SELECT count(*) FROM survivor")).isEqualTo("1");
	}

	@Test
	void answersNothingWhilePaused() throws Exception {
		DatabaseServer server = server();
		try (Connection connection = server.dataSource().getConnection()) {
			server.pause();
			CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
				try {
					return query(connection, "SELECT 'thawed'");
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			}, THREAD_PER_TASK);
			try {
				assertThatExceptionOfType(TimeoutException.class)
					.isThrownBy(() -> answer.get(500, TimeUnit.MILLISECONDS));
			}
			finally {
				server.resume();
			}
			assertThat(answer.get(30, TimeUnit.SECONDS)).isEqualTo("thawed");
		}
	}

	@Test
	void terminatesClientConnectionsFromTheServerSide() throws SQLException {
		DatabaseServer server = server();
		// a pool of its own: the shared pool's connections would be cut too, and the pool
		// finds out about each one only when it fails
		try (HikariDataSource pool = server.newDataSource(); Connection connection = pool.getConnection()) {
			assertThat(query(connection, "SELECT 1")).isEqualTo("1");
			int before = server.terminateConnections();
			assertThat(before).isGreaterThanOrEqualTo(1);
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> query(connection, "SELECT 1"));
		}
		try (Connection fresh = DriverManager.getConnection(server.jdbcUrl(), server.username(), server.password())) {
			assertThat(query(fresh, "SELECT 2")).isEqualTo("2");
		}
		// the shared pool's connections were cut too: let the next tests start afresh
		((HikariDataSource) server.dataSource()).getHikariPoolMXBean().softEvictConnections();
	}

	@Test
	void countsStatementsFromTheServersStatistics() throws SQLException {
		DatabaseServer server = server();
		execute(server.dataSource(), "CREATE TABLE counted (id INT PRIMARY KEY)");
		server.resetStatements();
		for (int i = 0; i < 3; i++) {
			execute(server.dataSource(), "INSERT INTO counted VALUES (" + i + ")");
		}
		query(server.dataSource(), "SELECT count(*) FROM counted");
		assertCounted(server, 3, 1);
		server.resetStatements();
		assertThat(server.statementCount("counted")).isZero();
	}

	/** The counts of INSERT and SELECT on table {@code counted}, in one snapshot. */
	static void assertCounted(DatabaseServer server, long inserts, long selects) {
		Map<String, Long> statements = server.statements();
		assertThat(sum(statements, "insert", "counted")).as("%s", statements).isEqualTo(inserts);
		assertThat(sum(statements, "select", "counted")).as("%s", statements).isEqualTo(selects);
	}

	private static long sum(Map<String, Long> statements, String prefix, String word) {
		return statements.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().toLowerCase(Locale.ROOT).startsWith(prefix))
			.filter((entry) -> entry.getKey().contains(word))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	static void execute(DataSource dataSource, String sql) throws SQLException {
		try (Connection connection = dataSource.getConnection(); Statement statement = connection.createStatement()) {
			statement.execute(sql);
		}
	}

	static String query(DataSource dataSource, String sql) throws SQLException {
		try (Connection connection = dataSource.getConnection()) {
			return query(connection, sql);
		}
	}

	static String query(Connection connection, String sql) throws SQLException {
		try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
			result.next();
			return result.getString(1);
		}
	}

}
