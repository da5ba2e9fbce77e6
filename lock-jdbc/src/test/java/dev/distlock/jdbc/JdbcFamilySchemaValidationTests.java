package dev.distlock.jdbc;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * The startup schema check on PostgreSQL and MariaDB refuses a schema that lacks one of
 * the lock family's tables beside the lock table, or a column of one, naming the table
 * and the DDL file that creates it, whichever table it is: the read-write locks' tables
 * always, the semaphores' and the latches' once one table of the member exists.
 */
@Tag("server")
class JdbcFamilySchemaValidationTests {

	private static final List<String> FAMILY_TABLES = List.of("_reader", "_intent", "_semaphore", "_permit", "_latch",
			"_latch_participant");

	static List<Object[]> missingTables() {
		List<Object[]> cases = new ArrayList<>();
		for (String database : List.of("postgresql", "mariadb")) {
			FAMILY_TABLES.forEach((suffix) -> cases.add(new Object[] { database, suffix }));
		}
		return cases;
	}

	static List<String> databases() {
		return List.of("postgresql", "mariadb");
	}

	private static DatabaseServer server(String database) {
		return database.equals("mariadb") ? MariaDbServer.shared() : PostgresServer.shared();
	}

	@ParameterizedTest(name = "{0}: without the table <lock table>{1}")
	@MethodSource("missingTables")
	void aMissingFamilyTableIsNamedWithItsDdl(String database, String suffix) {
		DatabaseServer server = server(database);
		String table = "schema_check_" + FAMILY_TABLES.indexOf(suffix);
		JdbcTemplate admin = new JdbcTemplate(server.dataSource());
		try (JdbcLockProvider provider = new JdbcLockProvider(server.dataSource(), table)) {
			provider.createTableIfMissing();
			assertThatNoException().isThrownBy(provider::validateSchema);
			admin.execute("DROP TABLE " + table + suffix);
			assertThatIllegalStateException().isThrownBy(provider::validateSchema)
				.withMessageContaining("the table '" + table + suffix + "'")
				.withMessageContaining("classpath:dev/distlock/jdbc/schema-" + database + ".sql")
				.withMessageContaining("initialize-schema=always");
			provider.createTableIfMissing();
			assertThatNoException().isThrownBy(provider::validateSchema);
		}
	}

	/**
	 * A schema made before semaphores and latches existed, without any of their tables,
	 * passes: plain locks keep working.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aSchemaWithoutSemaphoreAndLatchTablesPasses(String database) {
		DatabaseServer server = server(database);
		String table = "schema_check_old";
		JdbcTemplate admin = new JdbcTemplate(server.dataSource());
		try (JdbcLockProvider provider = new JdbcLockProvider(server.dataSource(), table)) {
			provider.createTableIfMissing();
			for (String suffix : List.of("_semaphore", "_permit", "_latch", "_latch_participant")) {
				admin.execute("DROP TABLE " + table + suffix);
			}
			assertThatNoException().isThrownBy(provider::validateSchema);
		}
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("databases")
	void aFamilyTableLackingAColumnIsNamed(String database) {
		DatabaseServer server = server(database);
		String table = "schema_check_col";
		JdbcTemplate admin = new JdbcTemplate(server.dataSource());
		try (JdbcLockProvider provider = new JdbcLockProvider(server.dataSource(), table)) {
			provider.createTableIfMissing();
			admin.execute("ALTER TABLE " + table + "_latch DROP COLUMN previous_opened");
			try {
				assertThatIllegalStateException().isThrownBy(provider::validateSchema)
					.withMessageContaining("the table '" + table + "_latch'")
					.withMessageContaining("previous_opened")
					.withMessageContaining("countdown latches");
			}
			finally {
				admin.execute("DROP TABLE " + table + "_latch");
			}
		}
	}

}
