package dev.distlock.jdbc;

import java.util.function.BooleanSupplier;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockBackendException;
import dev.distlock.harness.jdbc.MariaDbServer;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Pools with HikariCP's default settings on the servers shared by this JVM's tests, and
 * helpers the JDBC tests share.
 */
final class TestDatabases {

	private TestDatabases() {
	}

	static HikariDataSource postgres() {
		return PostgresServer.shared().newDataSource();
	}

	static HikariDataSource mariadb() {
		return MariaDbServer.shared().newDataSource();
	}

	/** The handle of an attempt that must have acquired. */
	static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

	/** The call's answer, or false while the store fails (down, restarting). */
	static boolean whileStoreFails(BooleanSupplier call) {
		try {
			return call.getAsBoolean();
		}
		catch (LockBackendException ex) {
			return false;
		}
	}

}
