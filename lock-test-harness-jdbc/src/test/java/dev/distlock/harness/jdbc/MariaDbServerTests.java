package dev.distlock.harness.jdbc;

import java.sql.SQLException;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class MariaDbServerTests extends AbstractDatabaseServerTests {

	private static MariaDbServer mariadb;

	@BeforeAll
	static void start() {
		mariadb = MariaDbServer.start();
	}

	@AfterAll
	static void close() {
		mariadb.close();
	}

	@Override
	protected DatabaseServer server() {
		return mariadb;
	}

	@Test
	void connectsAsDistlockWithEveryPrivilege() throws SQLException {
		assertThat(query(mariadb.dataSource(), "SELECT CONCAT(CURRENT_USER(), ' ', DATABASE())"))
			.isEqualTo("distlock@% distlock");
		assertThat(query(mariadb.dataSource(), "SHOW GRANTS")).contains("GRANT ALL PRIVILEGES ON *.*");
		assertThat(mariadb.version()).contains("MariaDB");
	}

}
