package dev.distlock.harness.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One real PostgreSQL server process on 127.0.0.1 and a free port, with a data directory
 * of its own (deleted on {@link #close()}), user and password {@code distlock}, a
 * superuser, and a database {@code distlock}. The binaries are the ones
 * {@link PostgresBinaries#resolve()} finds. {@code initdb} and {@code postgres} refuse to
 * run as root, so when this JVM is root the server runs as {@code nobody}.
 * <p>
 * A cluster is created once per set of binaries with {@code initdb} (3 to 4 s) and kept
 * as a template under {@code <java.io.tmpdir>/distlock-postgres}; each server copies it,
 * so a start takes about a second. {@code fsync} is off (a killed server loses nothing
 * committed, only a crashed machine would); every other setting is PostgreSQL's default.
 * <p>
 * Statements are counted by {@code pg_stat_statements} (preloaded) when the binaries ship
 * it, else from the server log ({@code log_statement=all});
 * {@link #startWithStatementLog(PostgresBinaries)} asks for the log.
 *
 * <pre>
 * try (PostgresServer postgres = PostgresServer.start()) {
 *     DataSource dataSource = postgres.dataSource();
 * }
 * </pre>
 */
public final class PostgresServer extends AbstractDatabaseServer {

	private static final Pattern LOGGED_STATEMENT = Pattern
		.compile("^(\\S*)\\|\\S* LOG:  (?:statement|execute [^:]*): (.*)$");

	private final PostgresBinaries binaries;

	private final boolean statementLog;

	private volatile long logMark;

	private PostgresServer(PostgresBinaries binaries, boolean statementLog, Path dir, int port) {
		super(dir, port);
		this.binaries = binaries;
		this.statementLog = statementLog;
	}

	/**
	 * One server for the whole JVM, started on first use and killed when the JVM exits;
	 * for tests that do not stop, pause or restart it. Each such test uses tables of its
	 * own.
	 */
	public static PostgresServer shared() {
		return Shared.SERVER;
	}

	/** Starts a server with the default binaries. */
	public static PostgresServer start() {
		return start(PostgresBinaries.resolve());
	}

	/** Starts a server with the given binaries. */
	public static PostgresServer start(PostgresBinaries binaries) {
		return start(binaries, !binaries.hasPgStatStatements());
	}

	/**
	 * Starts a server that logs every statement, and counts statements from that log
	 * instead of {@code pg_stat_statements}.
	 */
	public static PostgresServer startWithStatementLog(PostgresBinaries binaries) {
		return start(binaries, true);
	}

	private static PostgresServer start(PostgresBinaries binaries, boolean statementLog) {
		Path template = template(binaries);
		IllegalStateException last = null;
		for (int attempt = 0; attempt < 3; attempt++) {
			Path dir = ServerProcesses.createTempDir("distlock-postgres");
			ServerProcesses.copyTree(template.resolve("data"), dir.resolve("data"));
			ServerProcesses.giveToUnprivileged(dir);
			PostgresServer server = new PostgresServer(binaries, statementLog, dir, ServerProcesses.freePort());
			try {
				server.launch();
				return server;
			}
			catch (IllegalStateException ex) {
				// most likely the port was taken between probing and binding
				server.close();
				last = ex;
			}
		}
		throw last;
	}

	/**
	 * An initialised cluster with the {@code distlock} database, made once per binaries.
	 */
	private static Path template(PostgresBinaries binaries) {
		String key = Integer.toHexString(binaries.bin().toAbsolutePath().toString().hashCode());
		return ServerProcesses.once(ServerProcesses.cacheDir("postgres").resolve("template-" + key),
				(dir) -> initdb(binaries, dir));
	}

	private static void initdb(PostgresBinaries binaries, Path dir) {
		Path passwordFile = dir.resolve("password");
		try {
			Files.writeString(passwordFile, "distlock\n");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		ServerProcesses.giveToUnprivileged(dir);
		Path data = dir.resolve("data");
		Duration timeout = Duration.ofMinutes(2);
		ServerProcesses.run(ServerProcesses
			.unprivileged(List.of(binaries.initdb().toString(), "-D", data.toString(), "-U", "distlock",
					"--pwfile=" + passwordFile, "--auth=scram-sha-256", "-E", "UTF8", "--no-locale", "--no-sync")),
				dir, null, timeout);
		String setup = "CREATE DATABASE distlock;\n";
		if (binaries.hasPgStatStatements()) {
			setup += "CREATE EXTENSION pg_stat_statements;\n";
		}
		singleUser(binaries, dir, "postgres", setup);
		if (binaries.hasPgStatStatements()) {
			singleUser(binaries, dir, "distlock", "CREATE EXTENSION pg_stat_statements;\n");
		}
		try {
			Files.delete(passwordFile);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void singleUser(PostgresBinaries binaries, Path dir, String database, String sql) {
		String output = ServerProcesses.run(ServerProcesses.unprivileged(
				List.of(binaries.postgres().toString(), "--single", "-D", dir.resolve("data").toString(), database)),
				dir, sql, Duration.ofMinutes(2));
		if (output.contains("ERROR:")) {
			throw new IllegalStateException("Setting up the PostgreSQL template failed: " + output);
		}
	}

	@Override
	List<String> command() {
		List<String> command = new ArrayList<>(List.of(this.binaries.postgres().toString(), "-D",
				dir().resolve("data").toString(), "-p", Integer.toString(port()), "-c", "listen_addresses=127.0.0.1",
				"-c", "unix_socket_directories=", "-c", "fsync=off"));
		if (this.statementLog) {
			command.addAll(List.of("-c", "log_statement=all", "-c", "log_line_prefix=%d|%u "));
		}
		else {
			command.addAll(List.of("-c", "shared_preload_libraries=pg_stat_statements"));
		}
		return ServerProcesses.unprivileged(command);
	}

	@Override
	Path logFile() {
		return dir().resolve("postgres.log");
	}

	@Override
	String stopSignal() {
		// SIGTERM would wait for every client to disconnect; SIGINT is the fast shutdown.
		return "INT";
	}

	@Override
	String adminUrl() {
		return "jdbc:postgresql://" + host() + ":" + port() + "/postgres";
	}

	@Override
	public String kind() {
		return "postgresql";
	}

	@Override
	public String version() {
		return queryString("SHOW server_version");
	}

	@Override
	public String jdbcUrl() {
		return "jdbc:postgresql://" + host() + ":" + port() + "/" + databaseName();
	}

	/** The binaries this server runs. */
	public PostgresBinaries binaries() {
		return this.binaries;
	}

	/**
	 * Whether statements are counted from the server log rather than
	 * {@code pg_stat_statements}.
	 */
	public boolean countsStatementsFromLog() {
		return this.statementLog;
	}

	@Override
	public int terminateConnections() {
		return admin((connection) -> {
			try (PreparedStatement statement = connection.prepareStatement(
					"SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 10000)) FROM pg_stat_activity"
							+ " WHERE datname = ? AND pid <> pg_backend_pid()")) {
				statement.setString(1, databaseName());
				try (ResultSet result = statement.executeQuery()) {
					result.next();
					return result.getInt(1);
				}
			}
		});
	}

	@Override
	public Map<String, Long> statements() {
		return this.statementLog ? loggedStatements() : statistics();
	}

	private Map<String, Long> statistics() {
		return countsFor("SELECT s.query, s.calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid"
				+ " WHERE d.datname = ? ORDER BY s.calls DESC");
	}

	private Map<String, Long> loggedStatements() {
		Map<String, Long> counts = new LinkedHashMap<>();
		try (Stream<String> lines = Files.lines(logFile())) {
			lines.skip(this.logMark).forEach((line) -> {
				Matcher matcher = LOGGED_STATEMENT.matcher(line);
				if (matcher.matches() && matcher.group(1).equals(databaseName())) {
					counts.merge(matcher.group(2), 1L, Long::sum);
				}
			});
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return counts;
	}

	@Override
	public void resetStatements() {
		if (this.statementLog) {
			try (Stream<String> lines = Files.lines(logFile())) {
				this.logMark = lines.count();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			return;
		}
		execute("SELECT pg_stat_statements_reset()");
	}

	private static final class Shared {

		static final PostgresServer SERVER = start();

		static {
			Runtime.getRuntime().addShutdownHook(new Thread(SERVER::close, "postgres-shutdown"));
		}

	}

}
