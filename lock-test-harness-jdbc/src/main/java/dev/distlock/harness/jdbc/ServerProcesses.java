package dev.distlock.harness.jdbc;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * What the database launchers share about processes and files: free ports, running a
 * setup command to completion, signalling a server's whole process tree, and who a server
 * runs as. PostgreSQL refuses to run as root, so when this JVM is root its commands run
 * as {@code nobody} through {@code setpriv}, which execs in place: the process this JVM
 * sees is the server itself, so signals reach it.
 */
final class ServerProcesses {

	private static final Path PASSWD = Path.of("/etc/passwd");

	private ServerProcesses() {
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free loopback port", ex);
		}
	}

	static boolean runningAsRoot() {
		try {
			return ((Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid")) == 0;
		}
		catch (IOException | UnsupportedOperationException ex) {
			return "root".equals(System.getProperty("user.name"));
		}
	}

	/**
	 * {@code command} as the unprivileged user when this JVM is root, else unchanged.
	 */
	static List<String> unprivileged(List<String> command) {
		if (!runningAsRoot()) {
			return command;
		}
		int[] ids = nobody();
		List<String> wrapped = new ArrayList<>(
				List.of("setpriv", "--reuid=" + ids[0], "--regid=" + ids[1], "--clear-groups", "--"));
		wrapped.addAll(command);
		return wrapped;
	}

	/** Gives a file tree to the unprivileged user when this JVM is root. */
	static void giveToUnprivileged(Path root) {
		if (!runningAsRoot()) {
			return;
		}
		int[] ids = nobody();
		try (Stream<Path> paths = Files.walk(root)) {
			for (Path path : (Iterable<Path>) paths::iterator) {
				Files.setAttribute(path, "unix:uid", ids[0]);
				Files.setAttribute(path, "unix:gid", ids[1]);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not give " + root + " to user nobody", ex);
		}
	}

	/** The uid and gid of {@code nobody}, from {@code /etc/passwd}. */
	private static int[] nobody() {
		try (Stream<String> lines = Files.lines(PASSWD)) {
			return lines.filter((line) -> line.startsWith("nobody:"))
				.map((line) -> line.split(":"))
				.map((fields) -> new int[] { Integer.parseInt(fields[2]), Integer.parseInt(fields[3]) })
				.findFirst()
				.orElseThrow(() -> new IllegalStateException(
						"This JVM runs as root and " + PASSWD + " has no user nobody to run the database as"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Runs a setup command to completion, feeding it {@code stdin}, and fails with its
	 * output when it exits non-zero or outlives the timeout.
	 */
	static String run(List<String> command, @Nullable Path directory, @Nullable String stdin, Duration timeout) {
		ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
		if (directory != null) {
			builder.directory(directory.toFile());
		}
		try {
			Process process = builder.start();
			if (stdin != null) {
				process.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
			}
			process.getOutputStream().close();
			ByteArrayOutputStream output = new ByteArrayOutputStream();
			Thread reader = new Thread(() -> copy(process.getInputStream(), output), "db-setup-output");
			reader.start();
			if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
				process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
				throw new IllegalStateException(command + " did not finish within " + timeout + ": " + output);
			}
			reader.join(TimeUnit.SECONDS.toMillis(10));
			String text = output.toString(StandardCharsets.UTF_8);
			if (process.exitValue() != 0) {
				throw new IllegalStateException(command + " exited with " + process.exitValue() + ": " + text);
			}
			return text;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + command, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while running " + command, ex);
		}
	}

	private static void copy(InputStream in, ByteArrayOutputStream out) {
		try {
			in.transferTo(out);
		}
		catch (IOException ex) {
			// the process went away; what was read is kept
		}
	}

	/** A process and every descendant it has now. */
	static List<ProcessHandle> tree(ProcessHandle root) {
		List<ProcessHandle> all = new ArrayList<>();
		all.add(root);
		root.descendants().forEach(all::add);
		return all;
	}

	/**
	 * Sends a signal (e.g. {@code STOP}, {@code CONT}, {@code INT}) to each of the given
	 * processes: to a whole {@link #tree(ProcessHandle)}, a stopped server answers on
	 * none of its connections, not only on new ones.
	 */
	static void signal(List<ProcessHandle> processes, String signal) {
		List<String> command = new ArrayList<>(List.of("kill", "-" + signal));
		processes.forEach((process) -> command.add(Long.toString(process.pid())));
		try {
			Process kill = new ProcessBuilder(command).redirectErrorStream(true).start();
			if (!kill.waitFor(10, TimeUnit.SECONDS)) {
				kill.destroyForcibly();
				throw new IllegalStateException(command + " did not finish");
			}
			String output = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			// a process that left meanwhile (a short-lived backend) is not an error
			boolean onlyGone = output.lines().allMatch((line) -> line.contains("No such process"));
			if (kill.exitValue() != 0 && !onlyGone) {
				throw new IllegalStateException(command + " failed: " + output);
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while sending " + command, ex);
		}
	}

	/**
	 * Kills a process and every descendant with SIGKILL, as a crash of the whole server
	 * would, and waits until all of them are gone.
	 */
	static void killTree(ProcessHandle root) {
		List<ProcessHandle> all = tree(root);
		all.forEach(ProcessHandle::destroyForcibly);
		awaitGone(all, Duration.ofSeconds(20));
	}

	/**
	 * Whether a process is alive and not a zombie: a server's children orphaned by its
	 * death stay zombies until the machine's init reaps them, which may take seconds.
	 */
	static boolean isRunning(ProcessHandle process) {
		if (!process.isAlive()) {
			return false;
		}
		char state = stateOf(process);
		return (state == '?') ? process.isAlive() : state != 'Z' && state != 'X';
	}

	/**
	 * Stops (SIGSTOP) a process and all its descendants, and returns once each of them is
	 * seen stopped by the kernel. A signal is delivered asynchronously, and a parent
	 * caught in the middle of a fork may still add a child after the tree was listed: the
	 * tree is listed again until it holds no process that is not stopped.
	 */
	static void stopTree(ProcessHandle root, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		Set<Long> signalled = new HashSet<>();
		while (true) {
			List<ProcessHandle> notStopped = tree(root).stream()
				.filter(ServerProcesses::isRunning)
				.filter((process) -> stateOf(process) != 'T')
				.toList();
			if (notStopped.isEmpty()) {
				return;
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("Processes " + notStopped + " of " + root + " did not stop");
			}
			List<ProcessHandle> fresh = notStopped.stream().filter((process) -> signalled.add(process.pid())).toList();
			if (!fresh.isEmpty()) {
				signal(fresh, "STOP");
			}
			else {
				try {
					Thread.sleep(1);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException("Interrupted while stopping " + root, ex);
				}
			}
		}
	}

	/** The process's state letter in {@code /proc/<pid>/stat} ('?' when unknown). */
	private static char stateOf(ProcessHandle process) {
		try {
			String stat = Files.readString(Path.of("/proc", Long.toString(process.pid()), "stat"));
			return stat.charAt(stat.lastIndexOf(')') + 2);
		}
		catch (IOException | RuntimeException ex) {
			return '?';
		}
	}

	/**
	 * Waits until none of the processes is {@link #isRunning(ProcessHandle) running}.
	 * Polled: {@code onExit()} of a process that is not this JVM's child is itself a slow
	 * poll.
	 */
	static boolean awaitGone(List<ProcessHandle> processes, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (processes.stream().anyMatch(ServerProcesses::isRunning)) {
			if (System.nanoTime() > deadline) {
				return false;
			}
			try {
				Thread.sleep(5);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}
		return true;
	}

	static Path createTempDir(String prefix) {
		try {
			return Files.createTempDirectory(prefix);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	static void deleteTree(Path root) {
		if (!Files.exists(root)) {
			return;
		}
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException | UncheckedIOException ex) {
			// best effort: a temp folder left behind is harmless
		}
	}

	/** Copies a directory tree keeping owners and modes ({@code cp -a}). */
	static void copyTree(Path from, Path to) {
		run(List.of("cp", "-a", from.toString(), to.toString()), null, null, Duration.ofMinutes(2));
	}

	/**
	 * The cache folder for files extracted or prepared once and reused across JVMs:
	 * {@code <java.io.tmpdir>/distlock-<name>}, readable by the unprivileged user.
	 */
	static Path cacheDir(String name) {
		try {
			Path dir = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"), "distlock-" + name));
			dir.toFile().setReadable(true, false);
			dir.toFile().setExecutable(true, false);
			return dir;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Builds {@code target} once, across JVMs: {@code build} fills a fresh sibling folder
	 * which is then moved into place atomically; a JVM that loses the race uses the
	 * winner's.
	 */
	static Path once(Path target, java.util.function.Consumer<Path> build) {
		if (Files.isDirectory(target)) {
			return target;
		}
		Path partial;
		try {
			partial = Files.createTempDirectory(target.getParent(), target.getFileName() + ".partial");
			partial.toFile().setReadable(true, false);
			partial.toFile().setExecutable(true, false);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		try {
			build.accept(partial);
			Files.move(partial, target, java.nio.file.StandardCopyOption.ATOMIC_MOVE);
		}
		catch (IOException ex) {
			if (!Files.isDirectory(target)) {
				throw new UncheckedIOException("Could not prepare " + target, ex);
			}
		}
		finally {
			deleteTree(partial);
		}
		return target;
	}

}
