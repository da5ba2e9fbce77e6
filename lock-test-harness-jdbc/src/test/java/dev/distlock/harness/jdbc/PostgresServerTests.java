package dev.distlock.harness.jdbc;

import java.sql.SQLException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PostgresServerTests extends AbstractDatabaseServerTests {

	private static PostgresServer postgres;

	@BeforeAll
	static void start() {
		postgres = PostgresServer.start();
	}

	@AfterAll
	static void close() {
		postgres.close();
	}

	@Override
	protected DatabaseServer server() {
		return postgres;
	}

	@Test
	void connectsAsTheSuperuserDistlock() throws SQLException {
		assertThat(query(postgres.dataSource(), "SELECT current_user || '@' || current_database()"))
			.isEqualTo("distlock@distlock");
		assertThat(query(postgres.dataSource(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"))
			.isEqualTo("t");
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
			query(logged.dataSource(), "SELECT count(*) FROM counted");
			assertCounted(logged, 3, 1);
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

}
