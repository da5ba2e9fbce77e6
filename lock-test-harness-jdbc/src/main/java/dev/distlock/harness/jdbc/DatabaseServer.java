package dev.distlock.harness.jdbc;

import java.util.Map;

import javax.sql.DataSource;

/**
 * A real database server process that a test started on a free loopback port (127.0.0.1),
 * with its own data directory: a {@link PostgresServer} or a {@link MariaDbServer}. The
 * test owns it: it can stop, kill, restart, freeze and thaw it, cut its connections from
 * the server side and count the statements it ran. The user is a superuser of the server;
 * every test uses tables of its own in {@link #databaseName()}.
 */
public interface DatabaseServer extends AutoCloseable {

	/** {@code postgresql} or {@code mariadb}. */
	String kind();

	/** The server's version, e.g. {@code 15.18} or {@code 11.4.5-MariaDB}. */
	String version();

	String host();

	int port();

	/** A JDBC URL for {@link #databaseName()}, with the driver's default settings. */
	String jdbcUrl();

	String username();

	String password();

	String databaseName();

	/**
	 * A HikariCP pool on {@link #jdbcUrl()} with HikariCP's default settings, created on
	 * first use and closed with the server. It survives {@link #restart()}: the port
	 * stays the same, and a restart evicts the connections to the old process.
	 */
	DataSource dataSource();

	/** A new HikariCP pool with default settings; the caller closes it. */
	com.zaxxer.hikari.HikariDataSource newDataSource();

	/** The server's process id. */
	long pid();

	boolean isAlive();

	/** Shuts the server down cleanly, disconnecting its clients, and waits for it. */
	void stop();

	/** Kills the server with SIGKILL, as a crash would, and waits until it is gone. */
	void kill();

	/**
	 * Starts a stopped or killed server again on the same port and data directory, so
	 * committed data survives (crash recovery runs after {@link #kill()}).
	 */
	void restart();

	/**
	 * Freezes the server with SIGSTOP (every process of it): connections stay open but
	 * nothing is answered until {@link #resume()}, as with a stalled host.
	 */
	void pause();

	/** Lets a {@link #pause() paused} server run again (SIGCONT). */
	void resume();

	/**
	 * Closes every client connection to {@link #databaseName()} from the server side
	 * (PostgreSQL {@code pg_terminate_backend}, MariaDB {@code KILL}), as a DBA or a
	 * failover would.
	 * @return how many connections were closed
	 */
	int terminateConnections();

	/**
	 * The statements run in {@link #databaseName()} since the last
	 * {@link #resetStatements()}, as the server's own statistics have them (statement
	 * text normalised by the server, constants replaced) with their execution counts. The
	 * launcher's own queries are not included; the driver's and the pool's are (a new
	 * pgjdbc connection runs {@code SET application_name = ...}), so count a store's
	 * statements with {@link #statementCount(String)}.
	 */
	Map<String, Long> statements();

	/** The sum of {@link #statements()}. */
	default long statementCount() {
		return statements().values().stream().mapToLong(Long::longValue).sum();
	}

	/**
	 * The executions of the statements whose text contains {@code fragment}, ignoring
	 * case.
	 */
	default long statementCount(String fragment) {
		String wanted = fragment.toLowerCase(java.util.Locale.ROOT);
		return statements().entrySet()
			.stream()
			.filter((entry) -> entry.getKey().toLowerCase(java.util.Locale.ROOT).contains(wanted))
			.mapToLong(Map.Entry::getValue)
			.sum();
	}

	/** Clears the statement statistics. */
	void resetStatements();

	/** Kills the server if it is running and deletes its data directory. */
	@Override
	void close();

}
