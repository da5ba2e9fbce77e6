package dev.distlock.harness.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.jspecify.annotations.Nullable;

/**
 * The process handling both launchers share: launch on a port, wait until a JDBC
 * connection succeeds, signals, restart on the same port and directory, the pool.
 */
abstract class AbstractDatabaseServer implements DatabaseServer {

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);

	private final Path dir;

	private final int port;

	private volatile @Nullable Process process;

	private volatile @Nullable HikariDataSource dataSource;

	private volatile boolean paused;

	AbstractDatabaseServer(Path dir, int port) {
		this.dir = dir;
		this.port = port;
	}

	/** The command that runs the server in the foreground on {@link #port()}. */
	abstract List<String> command();

	/** The file the server's output goes to (appended to across restarts). */
	abstract Path logFile();

	/** The signal that shuts the server down cleanly, disconnecting clients. */
	abstract String stopSignal();

	/** A JDBC URL for the launcher's own queries, outside {@link #databaseName()}. */
	abstract String adminUrl();

	final Path dir() {
		return this.dir;
	}

	/** Starts the process and waits until it accepts connections. */
	final void launch() {
		ProcessBuilder builder = new ProcessBuilder(command()).directory(this.dir.toFile())
			.redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()));
		try {
			this.process = builder.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + command(), ex);
		}
		awaitReady();
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		SQLException last = null;
		while (System.nanoTime() < deadline) {
			if (!isAlive()) {
				throw new IllegalStateException(
						kind() + " exited on start (port " + this.port + "), exit code " + exitCode() + ": " + log());
			}
			try (Connection connection = DriverManager.getConnection(jdbcUrl(), username(), password())) {
				if (connection.isValid(5)) {
					return;
				}
			}
			catch (SQLException ex) {
				last = ex;
			}
			try {
				Thread.sleep(50);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				killQuietly();
				throw new IllegalStateException("Interrupted while starting " + kind(), ex);
			}
		}
		killQuietly();
		throw new IllegalStateException(kind() + " on port " + this.port + " accepted no connection within "
				+ STARTUP_TIMEOUT + " (last error: " + last + "): " + log());
	}

	private String exitCode() {
		Process current = this.process;
		return (current != null && !current.isAlive()) ? Integer.toString(current.exitValue()) : "?";
	}

	String log() {
		try {
			String text = Files.exists(logFile()) ? Files.readString(logFile()) : "(no log)";
			return (text.length() > 4000) ? text.substring(text.length() - 4000) : text;
		}
		catch (IOException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

	/** A fresh connection for the launcher's own queries, outside the pool. */
	final Connection adminConnection() throws SQLException {
		return DriverManager.getConnection(adminUrl(), username(), password());
	}

	final <T> T admin(SqlFunction<T> function) {
		try (Connection connection = adminConnection()) {
			return function.apply(connection);
		}
		catch (SQLException ex) {
			throw new IllegalStateException(kind() + " on port " + this.port + ": " + ex.getMessage(), ex);
		}
	}

	/** The first column of the first row of {@code sql}, run by the launcher. */
	final String queryString(String sql) {
		return admin((connection) -> {
			try (Statement statement = connection.createStatement(); ResultSet result = statement.executeQuery(sql)) {
				result.next();
				return result.getString(1);
			}
		});
	}

	/** Runs {@code sql} (no result), as the launcher. */
	final void execute(String sql) {
		admin((connection) -> {
			try (Statement statement = connection.createStatement()) {
				statement.execute(sql);
			}
			return null;
		});
	}

	/**
	 * The rows of {@code sql}, whose one parameter is {@link #databaseName()}, as text to
	 * a number (summed when a text comes twice).
	 */
	final Map<String, Long> countsFor(String sql) {
		return admin((connection) -> {
			Map<String, Long> counts = new LinkedHashMap<>();
			try (PreparedStatement statement = connection.prepareStatement(sql)) {
				statement.setString(1, databaseName());
				try (ResultSet result = statement.executeQuery()) {
					while (result.next()) {
						counts.merge(result.getString(1), result.getLong(2), Long::sum);
					}
				}
			}
			return counts;
		});
	}

	@Override
	public String host() {
		return "127.0.0.1";
	}

	@Override
	public int port() {
		return this.port;
	}

	@Override
	public String username() {
		return "distlock";
	}

	@Override
	public String password() {
		return "distlock";
	}

	@Override
	public String databaseName() {
		return "distlock";
	}

	@Override
	public DataSource dataSource() {
		HikariDataSource current = this.dataSource;
		if (current == null) {
			synchronized (this) {
				current = this.dataSource;
				if (current == null) {
					current = newDataSource();
					this.dataSource = current;
				}
			}
		}
		return current;
	}

	@Override
	public HikariDataSource newDataSource() {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl());
		config.setUsername(username());
		config.setPassword(password());
		config.setPoolName(kind() + "-" + this.port);
		return new HikariDataSource(config);
	}

	@Override
	public long pid() {
		return runningProcess().pid();
	}

	@Override
	public boolean isAlive() {
		Process current = this.process;
		return current != null && current.isAlive();
	}

	private Process runningProcess() {
		Process current = this.process;
		if (current == null || !current.isAlive()) {
			throw new IllegalStateException(kind() + " on port " + this.port + " is not running");
		}
		return current;
	}

	@Override
	public void stop() {
		Process current = runningProcess();
		List<ProcessHandle> tree = ServerProcesses.tree(current.toHandle());
		ServerProcesses.signal(List.of(current.toHandle()), stopSignal());
		if (!ServerProcesses.awaitGone(tree, Duration.ofSeconds(60))) {
			tree.forEach(ProcessHandle::destroyForcibly);
			ServerProcesses.awaitGone(tree, Duration.ofSeconds(20));
		}
		awaitReaped(current);
	}

	/**
	 * Waits until the JVM has reaped its dead child, so that it no longer counts as
	 * alive.
	 */
	private static void awaitReaped(Process process) {
		try {
			process.waitFor(20, java.util.concurrent.TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void kill() {
		Process current = runningProcess();
		ServerProcesses.killTree(current.toHandle());
		this.paused = false;
		awaitReaped(current);
	}

	@Override
	public void restart() {
		if (isAlive()) {
			throw new IllegalStateException(kind() + " on port " + this.port + " is still running: stop or kill it");
		}
		launch();
		HikariDataSource pool = this.dataSource;
		if (pool != null && pool.getHikariPoolMXBean() != null) {
			// HikariCP hands out a connection used in the last 500 ms without checking
			// it,
			// so a connection to the old process could still be borrowed: drop them all.
			pool.getHikariPoolMXBean().softEvictConnections();
		}
	}

	@Override
	public void pause() {
		this.paused = true;
		ServerProcesses.stopTree(runningProcess().toHandle(), Duration.ofSeconds(20));
	}

	@Override
	public void resume() {
		ServerProcesses.signal(ServerProcesses.tree(runningProcess().toHandle()), "CONT");
		this.paused = false;
	}

	private void killQuietly() {
		Process current = this.process;
		if (current != null && current.isAlive()) {
			ServerProcesses.killTree(current.toHandle());
		}
	}

	@Override
	public void close() {
		// A paused server answers nothing: it is killed before the pool closes, so that
		// the pool does not wait for answers.
		if (this.paused) {
			killQuietly();
		}
		HikariDataSource pool = this.dataSource;
		if (pool != null) {
			pool.close();
		}
		killQuietly();
		ServerProcesses.deleteTree(this.dir);
	}

	@Override
	public String toString() {
		return kind() + " " + jdbcUrl();
	}

	@FunctionalInterface
	interface SqlFunction<T> {

		T apply(Connection connection) throws SQLException;

	}

}
