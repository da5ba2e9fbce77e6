package dev.distlock.testsupport;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import javax.sql.DataSource;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class PostgresServerTests {

	private static PostgresServer postgres;

	@BeforeAll
	static void start() {
		postgres = PostgresServer.start();
	}

	@AfterAll
	static void close() {
		postgres.close();
	}

	@Test
	void answersQueriesOnLoopbackAsDistlock() throws SQLException {
		assertThat(postgres.jdbcUrl()).startsWith("jdbc:postgresql://127.0.0.1:" + postgres.port() + "/distlock");
		assertThat(postgres.version()).matches("\\d+\\.\\d+.*");
		assertThat(query(postgres.dataSource(), "SELECT current_user || '@' || current_database()"))
			.isEqualTo("distlock@distlock");
	}

	@Test
	void keepsCommittedRowsAcrossKillAndRestart() throws SQLException {
		execute(postgres.dataSource(), "CREATE TABLE survivor (id INT PRIMARY KEY)");
		execute(postgres.dataSource(), "INSERT INTO survivor VALUES (42)");
		long before = postgres.pid();
		int port = postgres.port();
		postgres.kill();
		assertThat(postgres.isAlive()).isFalse();
		assertThat(ProcessHandle.of(before)).isEmpty();
		postgres.restart();
		assertThat(postgres.port()).isEqualTo(port);
		assertThat(postgres.pid()).isNotEqualTo(before);
		// the pool recovers by itself on the same port
		assertThat(query(postgres.dataSource(), "SELECT id FROM survivor")).isEqualTo("42");
		postgres.stop();
		postgres.restart();
		assertThat(query(postgres.dataSource(), "SELECT count(*) FROM survivor")).isEqualTo("1");
	}

	@Test
	void answersNothingWhilePaused() throws Exception {
		try (Connection connection = postgres.dataSource().getConnection()) {
			postgres.pause();
			CompletableFuture<String> answer = CompletableFuture.supplyAsync(() -> {
				try (Statement statement = connection.createStatement();
						ResultSet result = statement.executeQuery("SELECT 'thawed'")) {
					result.next();
					return result.getString(1);
				}
				catch (SQLException ex) {
					throw new IllegalStateException(ex);
				}
			});
			try {
				assertThatExceptionOfType(TimeoutException.class)
					.isThrownBy(() -> answer.get(500, TimeUnit.MILLISECONDS));
			}
			finally {
				postgres.resume();
			}
			assertThat(answer.get(30, TimeUnit.SECONDS)).isEqualTo("thawed");
		}
	}

	@Test
	void terminatesClientConnectionsFromTheServerSide() throws SQLException {
		try (Connection connection = postgres.dataSource().getConnection()) {
			assertThat(query(connection, "SELECT 1")).isEqualTo("1");
			assertThat(postgres.terminateConnections()).isGreaterThanOrEqualTo(1);
			assertThatExceptionOfType(SQLException.class).isThrownBy(() -> query(connection, "SELECT 1"));
		}
		assertThat(query(postgres.dataSource(), "SELECT 2")).isEqualTo("2");
	}

	@Test
	void countsStatementsFromTheServersStatistics() throws SQLException {
		execute(postgres.dataSource(), "CREATE TABLE counted (id INT PRIMARY KEY)");
		postgres.resetStatements();
		for (int i = 0; i < 3; i++) {
			execute(postgres.dataSource(), "INSERT INTO counted VALUES (" + i + ")");
		}
		query(postgres.dataSource(), "SELECT count(*) FROM counted");
		assertThat(postgres.statementCount("insert into counted")).isEqualTo(3);
		assertThat(postgres.statementCount("from counted")).isEqualTo(1);
		// the rest is the driver's own: a new pgjdbc connection runs SET
		// application_name,
		// and the pool opens connections in the background
		assertThat(postgres.statements())
			.allSatisfy((sql, count) -> assertThat(sql).containsAnyOf("counted", "SET application_name"));
		postgres.resetStatements();
		assertThat(postgres.statementCount("counted")).isZero();
	}

	@Test
	void countsStatementsFromTheLogWhenAsked() throws SQLException {
		try (PostgresServer logged = PostgresServer.startWithStatementLog(postgres.binaries())) {
			assertThat(logged.countsStatementsFromLog()).isTrue();
			execute(logged.dataSource(), "CREATE TABLE counted (id INT PRIMARY KEY)");
			logged.resetStatements();
			for (int i = 0; i < 3; i++) {
				execute(logged.dataSource(), "INSERT INTO counted VALUES (" + i + ")");
			}
			assertThat(logged.statementCount("insert into counted")).isEqualTo(3);
			assertThat(logged.statementCount()).isEqualTo(3);
		}
	}

	@Test
	void runsTheBinariesShippedInTheMavenArtifact() throws SQLException {
		try (PostgresServer bundled = PostgresServer.start(PostgresBinaries.bundled())) {
			assertThat(bundled.version()).startsWith("18.");
			assertThat(bundled.countsStatementsFromLog()).isFalse();
			assertThat(query(bundled.dataSource(), "SELECT current_database()")).isEqualTo("distlock");
		}
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
