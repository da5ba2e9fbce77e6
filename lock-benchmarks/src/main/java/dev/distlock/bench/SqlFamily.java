package dev.distlock.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;

/**
 * The lock family as an application would write it by hand in SQL, for the members no
 * peer library offers on a relational database. Two of them:
 * <ul>
 * <li>{@code sql-table}: holds as rows with an owner and an expiry, one row per key
 * locked {@code FOR UPDATE} to decide; a busy answer is retried every 10 ms. On
 * PostgreSQL and MariaDB.</li>
 * <li>{@code pg-advisory}: PostgreSQL's session advisory locks (shared for readers, one
 * lock number per permit for a semaphore), each hold keeping a pooled connection; no
 * lease (a hold lasts as long as its connection).</li>
 * </ul>
 */
abstract class SqlFamily implements FamilyLib {

	final HikariDataSource dataSource;

	SqlFamily(HikariDataSource dataSource) {
		this.dataSource = dataSource;
	}

	@Override
	public void close() {
		this.dataSource.close();
	}

	static void pause() {
		LockSupport.parkNanos(10_000_000);
	}

	/** Holds as rows: one statement set per attempt, in one transaction. */
	static final class Table extends SqlFamily {

		private final boolean postgres;

		private final String now;

		private final String expiry;

		Table(HikariDataSource dataSource, boolean postgres) {
			super(dataSource);
			this.postgres = postgres;
			this.now = postgres ? "clock_timestamp()" : "NOW(6)";
			this.expiry = postgres ? "clock_timestamp() + interval '30 seconds'" : "NOW(6) + INTERVAL 30 SECOND";
			try (Connection connection = dataSource.getConnection()) {
				connection.createStatement()
					.execute("CREATE TABLE IF NOT EXISTS hw_lock_key (name VARCHAR(255) NOT NULL PRIMARY KEY)");
				connection.createStatement()
					.execute("CREATE TABLE IF NOT EXISTS hw_lock_hold (name VARCHAR(255) NOT NULL,"
							+ " owner VARCHAR(64) NOT NULL, mode CHAR(1) NOT NULL, expires_at "
							+ (postgres ? "TIMESTAMPTZ(6)" : "TIMESTAMP(6)") + " NOT NULL, PRIMARY KEY (name, owner))");
			}
			catch (SQLException ex) {
				throw new IllegalStateException(ex);
			}
		}

		@Override
		public String name() {
			return "sql-table";
		}

		@Override
		public Lib.Unlock readWrite(String key, boolean read) throws SQLException {
			return take(List.of(key), read ? 'R' : 'W', 0);
		}

		@Override
		public Lib.Unlock permit(String key, int permits) throws SQLException {
			return take(List.of(key), 'P', permits);
		}

		@Override
		public Lib.Unlock all(List<String> keys) throws SQLException {
			return take(keys, 'W', 0);
		}

		private Lib.Unlock take(List<String> keys, char mode, int permits) throws SQLException {
			String owner = UUID.randomUUID().toString();
			while (!attempt(keys, mode, permits, owner)) {
				pause();
			}
			return () -> release(keys, owner);
		}

		private boolean attempt(List<String> keys, char mode, int permits, String owner) throws SQLException {
			try (Connection connection = this.dataSource.getConnection()) {
				connection.setAutoCommit(false);
				try {
					for (String key : keys) {
						if (!free(connection, key, mode, permits)) {
							connection.rollback();
							return false;
						}
					}
					for (String key : keys) {
						update(connection, "INSERT INTO hw_lock_hold (name, owner, mode, expires_at) VALUES (?, ?, ?, "
								+ this.expiry + ")", key, owner, String.valueOf(mode));
					}
					connection.commit();
					return true;
				}
				catch (SQLTransactionRollbackException ex) {
					// A deadlock between two first inserts of one key: busy, as the
					// database says.
					connection.rollback();
					return false;
				}
				catch (SQLException | RuntimeException ex) {
					connection.rollback();
					throw ex;
				}
				finally {
					connection.setAutoCommit(true);
				}
			}
		}

		/** Whether {@code key} can take a hold of {@code mode}, with its row locked. */
		private boolean free(Connection connection, String key, char mode, int permits) throws SQLException {
			// Inserting the key's row only when it is missing: an insert of an existing
			// row
			// takes a shared lock on MariaDB, which deadlocks with another caller's FOR
			// UPDATE.
			if (!lockRow(connection, key)) {
				update(connection, this.postgres ? "INSERT INTO hw_lock_key (name) VALUES (?) ON CONFLICT DO NOTHING"
						: "INSERT IGNORE INTO hw_lock_key (name) VALUES (?)", key);
				lockRow(connection, key);
			}
			update(connection, "DELETE FROM hw_lock_hold WHERE name = ? AND expires_at < " + this.now, key);
			List<String> modes = new ArrayList<>();
			try (PreparedStatement holds = connection
				.prepareStatement("SELECT mode FROM hw_lock_hold WHERE name = ?")) {
				holds.setString(1, key);
				try (ResultSet rows = holds.executeQuery()) {
					while (rows.next()) {
						modes.add(rows.getString(1));
					}
				}
			}
			return switch (mode) {
				case 'R' -> !modes.contains("W");
				case 'P' -> modes.size() < permits;
				default -> modes.isEmpty();
			};
		}

		private static boolean lockRow(Connection connection, String key) throws SQLException {
			try (PreparedStatement lock = connection
				.prepareStatement("SELECT name FROM hw_lock_key WHERE name = ? FOR UPDATE")) {
				lock.setString(1, key);
				try (ResultSet row = lock.executeQuery()) {
					return row.next();
				}
			}
		}

		private void release(List<String> keys, String owner) throws SQLException {
			try (Connection connection = this.dataSource.getConnection()) {
				for (String key : keys) {
					update(connection, "DELETE FROM hw_lock_hold WHERE name = ? AND owner = ?", key, owner);
				}
			}
		}

		private static void update(Connection connection, String sql, String... values) throws SQLException {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				for (int i = 0; i < values.length; i++) {
					statement.setString(i + 1, values[i]);
				}
				statement.executeUpdate();
			}
		}

	}

	/** PostgreSQL's session advisory locks, each hold on a connection of its own. */
	static final class Advisory extends SqlFamily {

		Advisory(HikariDataSource dataSource) {
			super(dataSource);
		}

		@Override
		public String name() {
			return "pg-advisory";
		}

		@Override
		public Lib.Unlock readWrite(String key, boolean read) throws SQLException {
			Connection connection = this.dataSource.getConnection();
			String side = read ? "_shared" : "";
			call(connection, "SELECT pg_advisory_lock" + side + "(hashtext(?))", key);
			return () -> {
				try (connection) {
					call(connection, "SELECT pg_advisory_unlock" + side + "(hashtext(?))", key);
				}
			};
		}

		@Override
		public Lib.Unlock permit(String key, int permits) throws SQLException {
			Connection connection = this.dataSource.getConnection();
			try {
				while (true) {
					for (int slot = 0; slot < permits; slot++) {
						if (tryLock(connection, key, slot)) {
							int taken = slot;
							return () -> {
								try (connection) {
									try (PreparedStatement unlock = connection
										.prepareStatement("SELECT pg_advisory_unlock(hashtext(?), ?)")) {
										unlock.setString(1, key);
										unlock.setInt(2, taken);
										unlock.executeQuery().close();
									}
								}
							};
						}
					}
					pause();
				}
			}
			catch (SQLException | RuntimeException ex) {
				connection.close();
				throw ex;
			}
		}

		private static boolean tryLock(Connection connection, String key, int slot) throws SQLException {
			try (PreparedStatement attempt = connection
				.prepareStatement("SELECT pg_try_advisory_lock(hashtext(?), ?)")) {
				attempt.setString(1, key);
				attempt.setInt(2, slot);
				try (ResultSet row = attempt.executeQuery()) {
					row.next();
					return row.getBoolean(1);
				}
			}
		}

		@Override
		public Lib.Unlock all(List<String> keys) throws SQLException {
			Connection connection = this.dataSource.getConnection();
			for (String key : keys) {
				call(connection, "SELECT pg_advisory_lock(hashtext(?))", key);
			}
			return () -> {
				try (connection) {
					for (String key : keys) {
						call(connection, "SELECT pg_advisory_unlock(hashtext(?))", key);
					}
				}
			};
		}

		private static void call(Connection connection, String sql, String key) throws SQLException {
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setString(1, key);
				statement.executeQuery().close();
			}
		}

	}

}
