package dev.distlock.zookeeper;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.WorkerArgs;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.jspecify.annotations.Nullable;

/**
 * A ZooKeeper server (curator-test's, 100 ms tick) in a JVM of its own, so that it can be
 * killed with {@code kill -9} and started again on its port with the data it had written:
 * ZooKeeper writes each transaction to its log before it answers, so what a client was
 * told survives the kill.
 */
final class ZookeeperServerJvm implements AutoCloseable {

	private static final String PORT = "port";

	private static final String DATA = "data";

	private final int port = InstanceSpec.getRandomPort();

	private final Path data;

	private @Nullable ChildJvm jvm;

	private ZookeeperServerJvm(Path data) {
		this.data = data;
	}

	/** A server started in a new JVM, on a free loopback port. */
	static ZookeeperServerJvm start() {
		try {
			ZookeeperServerJvm server = new ZookeeperServerJvm(Files.createTempDirectory("distlock-zookeeper"));
			server.restart();
			return server;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	int port() {
		return this.port;
	}

	String connectString() {
		return "127.0.0.1:" + this.port;
	}

	/** {@code kill -9} of the server's JVM; returns once it is gone. */
	void kill() {
		ChildJvm running = this.jvm;
		this.jvm = null;
		if (running != null) {
			try {
				running.kill();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
	}

	/** Starts the server's JVM again, on its port and data; returns once it serves. */
	void restart() {
		ChildJvm started = ChildJvm.start(ZookeeperServerJvm.class,
				Map.of(PORT, Integer.toString(this.port), DATA, this.data.toString()));
		try {
			started.awaitLine("READY", Duration.ofSeconds(60));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		this.jvm = started;
	}

	@Override
	public void close() {
		kill();
		deleteQuietly(this.data.toFile());
	}

	private static void deleteQuietly(File file) {
		File[] children = file.listFiles();
		if (children != null) {
			for (File child : children) {
				deleteQuietly(child);
			}
		}
		file.delete();
	}

	/** The server's JVM: serves until its standard input ends or it is killed. */
	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		InstanceSpec spec = TestZookeeper.spec(new File(settings.get(DATA)), Integer.parseInt(settings.get(PORT)),
				ZookeeperStoreFixture.TICK_MILLIS);
		try (TestingServer server = new TestingServer(spec, true)) {
			System.out.println("READY " + server.getConnectString());
			System.out.flush();
			while (System.in.read() != -1) {
				// serve until the parent closes the pipe
			}
		}
	}

}
