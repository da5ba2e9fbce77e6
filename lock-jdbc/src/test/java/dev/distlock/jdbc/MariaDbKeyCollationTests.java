package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.jdbc.core.JdbcTemplate;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * Keys compare exactly on a real MariaDB server, as in the JVM: the shipped DDL gives the
 * key column a binary collation, and a table whose key column has a collation that folds
 * case is refused, naming the table, the column, its collation and the statement that
 * fixes it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class MariaDbKeyCollationTests {

	private static final Duration LONG = Duration.ofSeconds(30);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private final JdbcTemplate admin = new JdbcTemplate(MariaDbServer.shared().dataSource());

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	private JdbcLockProvider provider(String table) {
		HikariDataSource pool = TestDatabases.mariadb();
		this.closeables.add(pool);
		JdbcLockProvider provider = new JdbcLockProvider(pool, table);
		this.closeables.add(provider);
		return provider;
	}

	/**
	 * Keys that differ only in case, in an accent or in a trailing space are locks of
	 * their own, each held at once, in the table the shipped DDL creates.
	 */
	@Test
	void keysThatDifferOnlyInCaseOrAccentOrTrailingSpaceAreTwoLocks() {
		JdbcLockProvider provider = provider("collation_lock");
		provider.createTableIfMissing();
		provider.validateSchema();
		String base = "order-" + UUID.randomUUID() + "-";
		List<LockHandle> held = new ArrayList<>();
		for (String key : List.of(base + "A", base + "a", base + "é", base + "e", base + "e ")) {
			held.add(acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LONG)))));
		}
		for (LockHandle handle : held) {
			assertThat(handle.release()).isTrue();
		}
	}

	/**
	 * A table made before with the database's default, case-insensitive collation is
	 * refused at the schema check, with what to run; once run, the table is accepted.
	 */
	@Test
	void aKeyColumnThatFoldsCaseIsRefusedWithTheStatementThatFixesIt() {
		String table = "ci_lock";
		this.admin.execute("DROP TABLE IF EXISTS " + table);
		this.admin.execute("CREATE TABLE " + table + " (name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE"
				+ " utf8mb4_general_ci NOT NULL PRIMARY KEY, owner VARCHAR(64), fence BIGINT NOT NULL, expires_at"
				+ " DATETIME(6) NOT NULL, waited BOOLEAN NOT NULL DEFAULT FALSE) ENGINE = InnoDB");
		JdbcLockProvider provider = provider(table);
		String fix = "ALTER TABLE " + table
				+ " MODIFY name VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NOT NULL";
		assertThatIllegalStateException().isThrownBy(provider::validateSchema)
			.withMessageContaining("table '" + table + "'")
			.withMessageContaining("key column 'name'")
			.withMessageContaining("utf8mb4_general_ci")
			.withMessageContaining(fix);
		this.admin.execute(fix);
		// The read-write lock tables, which the table made by hand lacks.
		provider.createTableIfMissing();
		provider.validateSchema();
	}

}
