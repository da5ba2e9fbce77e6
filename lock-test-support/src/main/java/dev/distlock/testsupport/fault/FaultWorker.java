package dev.distlock.fault;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

import dev.distlock.redis.TestRedis;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The worker JVM of a fault run, a second application instance: runs the {@link Workload}
 * against the same lock server and resource, writes its operations to a file, and prints
 * what it left behind.
 * <p>
 * Arguments: lock port, resource port, threads, duration ms, seed, lease ms, command
 * timeout ms (0: the client's default settings), history file, key count, fair. Prints
 * {@code READY}, waits for {@code GO}, then prints {@code LEAKS ...}, any
 * {@code ERROR ...} lines, and {@code DONE}.
 */
public final class FaultWorker {

	private FaultWorker() {
	}

	public static void main(String[] args) throws Exception {
		int lockPort = Integer.parseInt(args[0]);
		int resourcePort = Integer.parseInt(args[1]);
		int threads = Integer.parseInt(args[2]);
		Duration duration = Duration.ofMillis(Long.parseLong(args[3]));
		long seed = Long.parseLong(args[4]);
		Duration lease = Duration.ofMillis(Long.parseLong(args[5]));
		Duration commandTimeout = Duration.ofMillis(Long.parseLong(args[6]));
		Path history = Path.of(args[7]);
		System.setProperty("distlock.faults.keys", args[8]);
		LettuceConnectionFactory locks = FaultRun.lockConnections("127.0.0.1", lockPort, commandTimeout);
		LettuceConnectionFactory resourceConnections = TestRedis.connectionFactory("127.0.0.1", resourcePort,
				Duration.ofSeconds(10));
		FencedResource resource = new FencedResource(new StringRedisTemplate(resourceConnections));
		Workload workload = new Workload(1, locks, resource, lease, Boolean.parseBoolean(args[9]));
		try {
			System.out.println("READY");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if (!"GO".equals(in.readLine())) {
				System.exit(2);
			}
			workload.start(threads, System.nanoTime() + duration.toNanos(), seed);
			workload.join(duration.plus(lease.multipliedBy(4)).plusSeconds(30));
			try (Writer out = Files.newBufferedWriter(history)) {
				for (Op op : workload.ops()) {
					out.write(op.line());
					out.write('\n');
				}
			}
			System.out.println(workload.leaks().line());
			workload.errors().forEach((error, count) -> System.out.println("ERROR " + count + " " + error));
			workload.backendErrors()
				.forEach((error, count) -> System.out.println("BACKEND " + count + " " + error.replace('\n', ' ')));
			System.out.println("DONE");
		}
		finally {
			System.out.flush();
			workload.close();
			resource.close();
			locks.destroy();
			resourceConnections.destroy();
		}
		System.exit(0);
	}

}
