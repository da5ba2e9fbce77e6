package dev.distlock.harness.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * One real MariaDB server process ({@code mariadbd}) on 127.0.0.1 and a free port, with a
 * data directory of its own (deleted on {@link #close()}), a user {@code distlock} with
 * password {@code distlock} and every privilege, and a database {@code distlock}. The
 * binaries are the ones {@link MariaDbBinaries#resolve()} finds. As root the server runs
 * with {@code --user=root}.
 * <p>
 * The system tables are made once per set of binaries with {@code mariadb-install-db}
 * (about 10 s) and kept as a template under {@code <java.io.tmpdir>/distlock-mariadb};
 * each server copies it, so a start takes about 0.6 s of CPU (1 to 2 s on a quiet
 * machine; 5 to 8 s on a loaded 2-core one). Statements are counted by the Performance
 * Schema ({@code events_statements_summary_by_digest}), which is turned on; TLS is off
 * (MariaDB 11.4 would make an RSA key at every start, seconds of CPU); a commit writes
 * InnoDB's redo log to the operating system but does not flush it to disk
 * ({@code innodb_flush_log_at_trx_commit=2}: a killed server loses nothing committed,
 * only a crashed machine would, as with {@link PostgresServer}'s {@code fsync=off});
 * every other setting is MariaDB's default.
 * <p>
 * MySQL proper cannot run here (no MySQL server package or artifact runs on this
 * machine); SQL meant for MySQL 8 is run against MariaDB.
 */
public final class MariaDbServer extends AbstractDatabaseServer {

	private final MariaDbBinaries binaries;

	private final Path template;

	private MariaDbServer(MariaDbBinaries binaries, Path template, Path dir, int port) {
		super(dir, port);
		this.binaries = binaries;
		this.template = template;
	}

	/**
	 * One server for the whole JVM, started on first use and killed when the JVM exits;
	 * for tests that do not stop, pause or restart it. Each such test uses tables of its
	 * own.
	 */
	public static MariaDbServer shared() {
		return Shared.SERVER;
	}

	/** Starts a server with the default binaries. */
	public static MariaDbServer start() {
		return start(MariaDbBinaries.resolve());
	}

	/** Starts a server with the given binaries. */
	public static MariaDbServer start(MariaDbBinaries binaries) {
		Path template = template(binaries);
		IllegalStateException last = null;
		for (int attempt = 0; attempt < 3; attempt++) {
			Path dir = ServerProcesses.createTempDir("distlock-mariadb");
			ServerProcesses.copyTree(template.resolve("data"), dir.resolve("data"));
			MariaDbServer server = new MariaDbServer(binaries, template, dir, ServerProcesses.freePort());
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
	 * System tables and the script that adds the user and database, made once per
	 * binaries.
	 */
	private static Path template(MariaDbBinaries binaries) {
		String key = Integer.toHexString(binaries.home().toAbsolutePath().toString().hashCode());
		return ServerProcesses.once(ServerProcesses.cacheDir("mariadb").resolve("template-" + key),
				(dir) -> installDb(binaries, dir));
	}

	private static void installDb(MariaDbBinaries binaries, Path dir) {
		List<String> command = new ArrayList<>(List.of(binaries.installDb().toString(), "--no-defaults",
				"--basedir=" + binaries.home(), "--datadir=" + dir.resolve("data"),
				"--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"));
		if (ServerProcesses.runningAsRoot()) {
			command.add("--user=root");
		}
		ServerProcesses.run(command, dir, null, Duration.ofMinutes(3));
		try {
			// run by the server at every start, before it accepts connections
			Files.writeString(dir.resolve("init.sql"), """
					CREATE DATABASE IF NOT EXISTS distlock;
					CREATE USER IF NOT EXISTS 'distlock'@'%' IDENTIFIED BY 'distlock';
					GRANT ALL PRIVILEGES ON *.* TO 'distlock'@'%' WITH GRANT OPTION;
					""");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	List<String> command() {
		List<String> command = new ArrayList<>(List.of(this.binaries.mariadbd().toString(), "--no-defaults",
				"--basedir=" + this.binaries.home(), "--datadir=" + dir().resolve("data"), "--port=" + port(),
				"--bind-address=127.0.0.1", "--socket=" + dir().resolve("mariadb.sock"),
				"--pid-file=" + dir().resolve("mariadbd.pid"), "--tmpdir=" + dir(), "--skip-name-resolve",
				"--performance-schema=ON", "--init-file=" + this.template.resolve("init.sql"),
				// MariaDB 11.4 otherwise makes an RSA key for TLS at every start: seconds
				// of CPU
				"--skip-ssl",
				// A commit reaches the operating system, not the disk: a killed
				// server loses nothing committed, as with PostgreSQL's fsync=off
				"--innodb-flush-log-at-trx-commit=2"));
		Path messages = this.binaries.home().resolve("share");
		if (Files.isDirectory(messages.resolve("english"))) {
			command.add("--lc-messages-dir=" + messages);
		}
		if (ServerProcesses.runningAsRoot()) {
			command.add("--user=root");
		}
		return command;
	}

	@Override
	Path logFile() {
		return dir().resolve("mariadbd.log");
	}

	@Override
	String stopSignal() {
		return "TERM";
	}

	@Override
	String adminUrl() {
		return "jdbc:mariadb://" + host() + ":" + port() + "/";
	}

	@Override
	public String kind() {
		return "mariadb";
	}

	@Override
	public String version() {
		return queryString("SELECT VERSION()");
	}

	@Override
	public String jdbcUrl() {
		return "jdbc:mariadb://" + host() + ":" + port() + "/" + databaseName();
	}

	/** The binaries this server runs. */
	public MariaDbBinaries binaries() {
		return this.binaries;
	}

	@Override
	public int terminateConnections() {
		return admin((connection) -> {
			List<Long> ids = new ArrayList<>();
			try (PreparedStatement statement = connection.prepareStatement(
					"SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()")) {
				statement.setString(1, databaseName());
				try (ResultSet result = statement.executeQuery()) {
					while (result.next()) {
						ids.add(result.getLong(1));
					}
				}
			}
			int killed = 0;
			for (long id : ids) {
				try (Statement statement = connection.createStatement()) {
					statement.execute("KILL CONNECTION " + id);
					killed++;
				}
				catch (java.sql.SQLException ex) {
					// it went away by itself meanwhile (error 1094, unknown thread id)
					if (ex.getErrorCode() != 1094) {
						throw ex;
					}
				}
			}
			return killed;
		});
	}

	@Override
	public Map<String, Long> statements() {
		return countsFor("SELECT DIGEST_TEXT, COUNT_STAR FROM performance_schema.events_statements_summary_by_digest"
				+ " WHERE SCHEMA_NAME = ? AND DIGEST_TEXT IS NOT NULL ORDER BY COUNT_STAR DESC");
	}

	@Override
	public void resetStatements() {
		execute("TRUNCATE TABLE performance_schema.events_statements_summary_by_digest");
	}

	private static final class Shared {

		static final MariaDbServer SERVER = start();

		static {
			Runtime.getRuntime().addShutdownHook(new Thread(SERVER::close, "mariadb-shutdown"));
		}

	}

}
