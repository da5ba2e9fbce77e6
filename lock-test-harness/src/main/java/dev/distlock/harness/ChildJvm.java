package dev.distlock.harness;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Another JVM running a {@code main} class from the test class path, as a second
 * application instance would. Its standard output and error are collected line by line;
 * tests wait for a line with a given prefix, write lines to its standard input, stop and
 * resume it ({@link #signal}: {@code SIGSTOP}, {@code SIGCONT}) or kill it with
 * {@code SIGKILL} ({@link #kill}). Children log warnings only, if they use Logback.
 * Signals use the {@code kill} command, so they work on Linux and macOS hosts.
 */
public final class ChildJvm implements AutoCloseable {

	private final Process process;

	private final List<String> lines = new ArrayList<>();

	private final Writer input;

	/** Whether the child's output has ended; guarded by {@link #lines}. */
	private boolean outputEnded;

	private ChildJvm(Process process) {
		this.process = process;
		this.input = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
		Thread reader = new Thread(this::readOutput, "child-jvm-" + process.pid());
		reader.setDaemon(true);
		reader.start();
	}

	/**
	 * Starts {@code mainClass} in a new JVM with the test class path, passing
	 * {@code settings} as {@code key=value} arguments ({@link WorkerArgs}).
	 */
	public static ChildJvm start(Class<?> mainClass, Map<String, String> settings) {
		return start(mainClass, WorkerArgs.of(settings));
	}

	/** Starts {@code mainClass} in a new JVM with the test class path. */
	public static ChildJvm start(Class<?> mainClass, String... args) {
		String java = ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		List<String> command = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-Dlogback.configurationFile=dev/distlock/harness/child-logback.xml", "-cp",
				System.getProperty("java.class.path"), mainClass.getName()));
		command.addAll(List.of(args));
		try {
			return new ChildJvm(new ProcessBuilder(command).redirectErrorStream(true).start());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not start " + mainClass.getName(), ex);
		}
	}

	/** Waits for the first output line starting with {@code prefix} and returns it. */
	public String awaitLine(String prefix, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		synchronized (this.lines) {
			while (true) {
				for (String line : this.lines) {
					if (line.startsWith(prefix)) {
						return line;
					}
				}
				long remaining = deadline - System.nanoTime();
				if (remaining <= 0 || this.outputEnded) {
					throw new AssertionError("No line starting with '" + prefix + "' from the child JVM within "
							+ timeout + " (alive: " + this.process.isAlive() + "); its output:\n" + output());
				}
				TimeUnit.NANOSECONDS.timedWait(this.lines, Math.min(remaining, 100_000_000));
			}
		}
	}

	/** Sends a line to the child's standard input. */
	public void send(String line) {
		try {
			this.input.write(line + "\n");
			this.input.flush();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Waits for the child to exit and returns its exit code. */
	public int awaitExit(Duration timeout) throws InterruptedException {
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new AssertionError("Child JVM did not exit within " + timeout + "; its output:\n" + output());
		}
		return this.process.exitValue();
	}

	/**
	 * Kills the child with SIGKILL (as {@code kill -9} would) and waits until it is gone.
	 */
	public void kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
			throw new AssertionError("Child JVM " + this.process.pid() + " survived SIGKILL");
		}
	}

	/**
	 * Sends a signal ({@code STOP}, {@code CONT}) with {@code kill}, as an operator or a
	 * stalled host would.
	 */
	public void signal(String signal) throws IOException, InterruptedException {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(this.process.pid()))
			.redirectErrorStream(true)
			.start();
		if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
			throw new AssertionError("kill -" + signal + " " + this.process.pid() + " failed: "
					+ new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
		}
	}

	/** Everything the child printed so far. */
	public String output() {
		synchronized (this.lines) {
			return String.join("\n", this.lines);
		}
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			kill();
		}
	}

	private void readOutput() {
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(this.process.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				synchronized (this.lines) {
					this.lines.add(line);
					this.lines.notifyAll();
				}
			}
		}
		catch (IOException ex) {
			// the child is gone
		}
		finally {
			synchronized (this.lines) {
				this.outputEnded = true;
				this.lines.notifyAll();
			}
		}
	}

}
