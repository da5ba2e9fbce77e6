package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * The tables of the lock family beside the lock table, as the shipped DDL creates them
 * with it: read holds and writers' intents (read-write locks), semaphores and their
 * permits, latches and their participants. {@link JdbcLockProvider#validateSchema()} asks
 * for the columns the store uses of the read-write locks' tables, which any writer may
 * use, and of the semaphores' and the latches' tables once either table of the member
 * exists: a schema made from a partial or older DDL then fails at startup naming the
 * table, while one made before semaphores and latches existed keeps its plain locks.
 */
final class FamilyTables {

	/** The tables of one member: suffixes with the columns the store uses. */
	private record Member(String name, boolean always, List<String[]> tables) {

	}

	private static final List<Member> MEMBERS = List.of(
			new Member("read-write locks", true,
					List.of(new String[] { "_reader", "name, owner, fence, expires_at" },
							new String[] { "_intent", "name, waiter, expires_at" })),
			new Member("semaphores", false,
					List.of(new String[] { "_semaphore", "name, permits, fence, waited" },
							new String[] { "_permit", "name, owner, fence, expires_at" })),
			new Member("countdown latches", false, List.of(new String[] { "_latch",
					"name, generation, latch_count, remaining, previous_generation, previous_opened, expires_at" },
					new String[] { "_latch_participant", "name, generation, participant" })));

	private FamilyTables() {
	}

	/**
	 * The first family table of {@code lockTable} that is missing or lacks a column, as a
	 * phrase naming it, its columns and the member that uses it; null if every table
	 * checked is there. The tables of semaphores and of latches are checked when one of
	 * the member's tables exists.
	 * @throws SQLException if the database could not be asked (a retryable failure)
	 */
	static @Nullable String missingTable(Connection connection, String lockTable) throws SQLException {
		for (Member member : MEMBERS) {
			if (!member.always() && !anyExists(connection, lockTable, member)) {
				continue;
			}
			for (String[] table : member.tables()) {
				String name = lockTable + table[0];
				if (!answers(connection, "SELECT " + table[1] + " FROM " + name + " WHERE 1 = 0")) {
					return "the table '" + name + "' (" + table[1] + "), which " + member.name()
							+ " use, is missing or lacks a column";
				}
			}
		}
		return null;
	}

	private static boolean anyExists(Connection connection, String lockTable, Member member) throws SQLException {
		for (String[] table : member.tables()) {
			if (answers(connection, "SELECT 1 FROM " + lockTable + table[0] + " WHERE 1 = 0")) {
				return true;
			}
		}
		return false;
	}

	/** Whether {@code query} runs; a failure of the connection is thrown. */
	private static boolean answers(Connection connection, String query) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.executeQuery(query).close();
			return true;
		}
		catch (SQLException ex) {
			if (JdbcCalls.retryable(ex)) {
				throw ex;
			}
			return false;
		}
	}

}
