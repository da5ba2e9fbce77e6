package dev.distlock.harness.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One real {@code redis-server} process, bound to 127.0.0.1 on a free port (never 6379 by
 * default, never a server that happened to be running). Persistence is off unless extra
 * arguments turn it on; the working directory is a fresh temporary folder removed on
 * {@link #close()}. The binary is the one {@link RedisServerBinary#resolve()} finds, or a
 * bundled {@link RedisVersion} when a test asks for one.
 *
 * <pre>
 * try (RedisServer redis = RedisServer.start()) {
 *     connect to redis.host():redis.port()
 * }
 * try (RedisServer redis6 = RedisServer.start(RedisVersion.V6_2)) {
 *     a Redis 6.2, whatever redis-server the machine has
 * }
 * </pre>
 */
public final class RedisServer implements AutoCloseable {

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(20);

	private final Path binary;

	private final Process process;

	private final int port;

	private final Path dir;

	private final List<String> leadingArgs;

	private final List<String> extraArgs;

	private RedisServer(Path binary, Process process, int port, Path dir, List<String> leadingArgs,
			List<String> extraArgs) {
		this.binary = binary;
		this.process = process;
		this.port = port;
		this.dir = dir;
		this.leadingArgs = leadingArgs;
		this.extraArgs = extraArgs;
	}

	/**
	 * One server for the whole JVM, started on first use and killed when the JVM exits.
	 * For tests that only need a Redis and do not stop, pause or flush it; each such test
	 * uses its own keys.
	 */
	public static RedisServer shared() {
		return Shared.SERVER;
	}

	/** Starts a server with persistence off. */
	public static RedisServer start(String... extraArgs) {
		return startOn(0, extraArgs);
	}

	/** Starts the bundled binary of the given version, with persistence off. */
	public static RedisServer start(RedisVersion version, String... extraArgs) {
		return startOn(version, 0, extraArgs);
	}

	/**
	 * Starts a server on the given port, or on a free one when {@code port} is 0. Retries
	 * on another free port when the chosen one was taken between probing and binding.
	 */
	public static RedisServer startOn(int port, String... extraArgs) {
		return startOn(RedisServerBinary.resolve(), port, extraArgs);
	}

	/**
	 * As {@link #startOn(int, String...)}, with the bundled binary of the given version.
	 */
	public static RedisServer startOn(RedisVersion version, int port, String... extraArgs) {
		return startOn(RedisServerBinary.resolve(version), port, extraArgs);
	}

	static RedisServer startOn(Path binary, int port, String... extraArgs) {
		IllegalStateException last = null;
		for (int attempt = 0; attempt < 5; attempt++) {
			int chosen = (port != 0) ? port : freePort();
			try {
				return launch(binary, chosen, createDir(), List.of(), List.of(extraArgs));
			}
			catch (IllegalStateException ex) {
				last = ex;
				if (port != 0) {
					break;
				}
			}
		}
		throw last;
	}

	/**
	 * Starts a sentinel on a free port: {@code redis-server sentinel.conf --sentinel},
	 * the file holding {@code config}. Sentinel rewrites that file as it learns the
	 * deployment, so it lives in the server's own directory.
	 */
	static RedisServer startSentinel(Path binary, String config) {
		IllegalStateException last = null;
		for (int attempt = 0; attempt < 5; attempt++) {
			Path dir = createDir();
			Path file = dir.resolve("sentinel.conf");
			try {
				Files.writeString(file, config);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			try {
				return launch(binary, freePort(), dir, List.of(file.toString(), "--sentinel"), List.of());
			}
			catch (IllegalStateException ex) {
				last = ex;
			}
		}
		throw last;
	}

	private static RedisServer launch(Path binary, int port, Path dir, List<String> leadingArgs,
			List<String> extraArgs) {
		List<String> command = new ArrayList<>();
		command.add(binary.toString());
		// A configuration file has to come first, before any option.
		command.addAll(leadingArgs);
		command.addAll(List.of("--port", String.valueOf(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
				"no", "--dir", dir.toString(), "--daemonize", "no", "--logfile", "redis.log"));
		if (!binary.getFileName().toString().contains("-2.8.")) {
			// Redis 2.8 (RedisVersion.V2_8) predates protected mode and refuses the
			// option.
			command.addAll(List.of("--protected-mode", "no"));
		}
		command.addAll(extraArgs);
		ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
			.redirectErrorStream(true)
			.redirectOutput(dir.resolve("stdout.log").toFile());
		Process process;
		try {
			process = builder.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + command, ex);
		}
		RedisServer server = new RedisServer(binary, process, port, dir, leadingArgs, extraArgs);
		server.awaitReady();
		return server;
	}

	/**
	 * Restarts a stopped or killed server on the same port and directory (so an AOF file
	 * is replayed).
	 */
	public RedisServer restart() {
		if (this.process.isAlive()) {
			throw new IllegalStateException("redis-server on port " + this.port + " is still running");
		}
		return launch(this.binary, this.port, this.dir, this.leadingArgs, this.extraArgs);
	}

	public String host() {
		return "127.0.0.1";
	}

	public int port() {
		return this.port;
	}

	/** {@code redis://127.0.0.1:port}. */
	public String uri() {
		return "redis://" + host() + ":" + this.port;
	}

	public long pid() {
		return this.process.pid();
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Sends one command and returns the raw first reply line, e.g. {@code +PONG} or
	 * {@code :42}, or the whole text of a bulk string reply (lines joined with
	 * {@code \n}, e.g. for {@code INFO}).
	 */
	public String command(String... args) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host(), this.port), 1000);
			socket.setSoTimeout(5000);
			OutputStream out = socket.getOutputStream();
			StringBuilder request = new StringBuilder("*").append(args.length).append("\r\n");
			for (String arg : args) {
				request.append('$')
					.append(arg.getBytes(StandardCharsets.UTF_8).length)
					.append("\r\n")
					.append(arg)
					.append("\r\n");
			}
			out.write(request.toString().getBytes(StandardCharsets.UTF_8));
			out.flush();
			BufferedReader in = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
			String first = in.readLine();
			if (first != null && first.startsWith("$") && !first.equals("$-1")) {
				return readBulk(in, Integer.parseInt(first.substring(1)));
			}
			return first;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(
					"redis-server on port " + this.port + " did not answer " + Arrays.toString(args), ex);
		}
	}

	/** The server's {@code redis_version}, from {@code INFO server}. */
	public String version() {
		return command("INFO", "server").lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.map((line) -> line.substring("redis_version:".length()).trim())
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("No redis_version in INFO server"));
	}

	private static String readBulk(BufferedReader in, int length) throws IOException {
		StringBuilder text = new StringBuilder();
		int read = 0;
		while (read < length) {
			String line = in.readLine();
			if (line == null) {
				break;
			}
			if (text.length() > 0) {
				text.append('\n');
			}
			text.append(line);
			read += line.getBytes(StandardCharsets.UTF_8).length + 2;
		}
		return text.toString();
	}

	/** Kills the process with SIGKILL, as a crash would. */
	public void kill() {
		this.process.destroyForcibly();
		waitFor();
	}

	/**
	 * Freezes the process with SIGSTOP, as a stalled host or a long fork would: it keeps
	 * its connections and its clock runs on, but it answers nothing until
	 * {@link #resume()}. Keys whose TTL passes meanwhile expire on resume.
	 */
	public void pause() {
		signal("STOP");
	}

	/** Lets a {@link #pause() paused} process run again (SIGCONT). */
	public void resume() {
		signal("CONT");
	}

	private void signal(String signal) {
		try {
			Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid()))
				.redirectErrorStream(true)
				.start();
			if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
				throw new IllegalStateException("kill -" + signal + " " + this.process.pid() + " failed: "
						+ new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while signalling redis-server", ex);
		}
	}

	/** Stops the process (SIGTERM) and waits for it. */
	public void stop() {
		this.process.destroy();
		waitFor();
	}

	@Override
	public void close() {
		if (this.process.isAlive()) {
			kill();
		}
		deleteDir();
	}

	private void waitFor() {
		try {
			if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("redis-server exited on start (port " + this.port + "): " + log());
			}
			try {
				if ("+PONG".equals(command("PING"))) {
					return;
				}
			}
			catch (UncheckedIOException ex) {
				// not listening yet
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				this.process.destroyForcibly();
				throw new IllegalStateException("Interrupted while starting redis-server", ex);
			}
		}
		this.process.destroyForcibly();
		throw new IllegalStateException("redis-server did not answer PING within " + STARTUP_TIMEOUT + ": " + log());
	}

	private String log() {
		try {
			Path log = this.dir.resolve("redis.log");
			return Files.exists(log) ? Files.readString(log) : Files.readString(this.dir.resolve("stdout.log"));
		}
		catch (IOException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

	private static final class Shared {

		static final RedisServer SERVER = start();

		static {
			Runtime.getRuntime().addShutdownHook(new Thread(SERVER::close, "redis-server-shutdown"));
		}

	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free loopback port", ex);
		}
	}

	private static Path createDir() {
		try {
			return Files.createTempDirectory("distlock-redis");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void deleteDir() {
		try (Stream<Path> paths = Files.walk(this.dir)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// best effort: a temp folder left behind is harmless
		}
	}

}
