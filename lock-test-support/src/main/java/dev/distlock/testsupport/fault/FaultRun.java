package dev.distlock.fault;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import dev.distlock.fuzz.ChildJvm;
import dev.distlock.redis.TestRedis;
import dev.distlock.testsupport.FaultLog;

import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.output.ArrayOutput;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One fault class run end to end: its layout, the workload in this JVM and in a worker
 * JVM, the seeded faults, then the checks over everything recorded.
 */
final class FaultRun {

	static final Duration LEASE = Duration.ofMillis(1200);

	/**
	 * Commands time out after a lease: a hung call must not outlive the lock. (Classes
	 * that keep the client's defaults leave this to the store timeout.)
	 */
	static final Duration COMMAND_TIMEOUT = LEASE;

	/**
	 * Worker threads in this JVM ({@code distlock.faults.threads}); one fewer in the
	 * worker JVM.
	 */
	private static final int LOCAL_THREADS = Integer.getInteger("distlock.faults.threads", 4);

	private static final int WORKER_THREADS = LOCAL_THREADS - 1;

	private FaultRun() {
	}

	static FaultReport run(FaultClass fault, Duration duration, long seed) throws Exception {
		FaultLog log = new FaultLog(seed);
		Path history = Files.createTempFile("distlock-faults-" + fault, ".ops");
		try (FaultLayout layout = fault.layout()) {
			Duration commandTimeout = fault.clientDefaults() ? Duration.ZERO : COMMAND_TIMEOUT;
			LettuceConnectionFactory locks = lockConnections(layout.clients.host(), layout.clients.port(),
					commandTimeout);
			LettuceConnectionFactory resourceConnections = TestRedis.connectionFactory(layout.resource);
			StringRedisTemplate resourceRedis = new StringRedisTemplate(resourceConnections);
			FencedResource resource = new FencedResource(resourceRedis);
			Workload workload = new Workload(0, locks, resource, LEASE, fault.fair());
			List<Op> ops = new ArrayList<>();
			List<long[]> hangs = List.of();
			List<String> errors = new ArrayList<>();
			int leaks;
			StringBuilder leakDetail = new StringBuilder();
			try (ChildJvm worker = ChildJvm.start(FaultWorker.class, Integer.toString(layout.clients.port()),
					Integer.toString(layout.resource.port()), Integer.toString(WORKER_THREADS),
					Long.toString(duration.toMillis()), Long.toString(seed + 1), Long.toString(LEASE.toMillis()),
					Long.toString(commandTimeout.toMillis()), history.toString(), Integer.toString(Workload.KEYS),
					Boolean.toString(fault.fair()))) {
				worker.awaitLine("READY", Duration.ofSeconds(60));
				long end = System.nanoTime() + duration.toNanos();
				worker.send("GO");
				workload.start(LOCAL_THREADS, end, seed);
				FaultClass.Run run = new FaultClass.Run(layout, log, end, LEASE, workload::threads, (signal) -> {
					try {
						worker.signal(signal);
					}
					catch (IOException ex) {
						throw new UncheckedIOException(ex);
					}
					catch (InterruptedException ex) {
						Thread.currentThread().interrupt();
						throw new IllegalStateException(ex);
					}
				});
				fault.inject(run);
				hangs = run.hangs();
				Duration grace = LEASE.multipliedBy(6).plusSeconds(30);
				workload.join(duration.plus(grace));
				worker.awaitLine("DONE", duration.plus(grace));
				String leakLine = worker.awaitLine("LEAKS", Duration.ofSeconds(1));
				Workload.Leaks remote = Workload.Leaks.parse(leakLine);
				worker.output()
					.lines()
					.filter((line) -> line.startsWith("ERROR") || line.startsWith("BACKEND"))
					.forEach(errors::add);
				assertExit(worker);
				ops.addAll(workload.ops());
				Files.readAllLines(history).stream().map(Op::parse).forEach(ops::add);
				workload.errors().forEach((error, count) -> errors.add("ERROR " + count + " " + error));
				workload.backendErrors().forEach((error, count) -> errors.add("BACKEND " + count + " " + error));
				workload.close();
				Workload.Leaks local = workload.leaks();
				leaks = local.total() + remote.total();
				leakDetail.append("this JVM ").append(local).append(", worker JVM ").append(remote);
			}
			finally {
				workload.close();
				resource.close();
				locks.destroy();
			}
			leaks += leftInRedis(layout, leakDetail);
			long[] accepted = new long[Workload.KEYS];
			long[] values = new long[Workload.KEYS];
			for (int key = 0; key < Workload.KEYS; key++) {
				accepted[key] = resource.field(Workload.key(key), "accepted");
				values[key] = resource.field(Workload.key(key), "value");
			}
			resourceConnections.destroy();
			FaultReport report = FaultReport.check(fault, seed, duration.toSeconds(), ops, accepted, values, leaks,
					leakDetail.toString(), log.healTimes(), log.injectedCount(), errors, hangs);
			System.out.println("Fault schedule of " + fault + ":\n" + log.describe());
			return report;
		}
		finally {
			Files.deleteIfExists(history);
		}
	}

	/**
	 * Connections to the lock server, in either JVM: with {@code commandTimeout}, or with
	 * the client's default settings (Lettuce's 60 s command timeout) when it is zero.
	 */
	static LettuceConnectionFactory lockConnections(String host, int port, Duration commandTimeout) {
		if (!commandTimeout.isZero()) {
			return TestRedis.connectionFactory(host, port, commandTimeout);
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.defaultConfiguration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static void assertExit(ChildJvm worker) throws InterruptedException {
		int exit = worker.awaitExit(Duration.ofSeconds(30));
		if (exit != 0) {
			throw new AssertionError("Worker JVM exited with " + exit + ":\n" + worker.output());
		}
	}

	/**
	 * Lock keys and fair queue keys still in Redis once every holder and waiter is gone
	 * and a lease has passed (a key whose holder lost its connection expires after its
	 * lease; a queue whose last waiter died expires after twice the queue timeout, under
	 * the lease plus the margin here), plus subscribers left on the release channel.
	 */
	private static int leftInRedis(FaultLayout layout, StringBuilder detail) {
		StringRedisTemplate admin = layout.admin();
		long deadline = System.nanoTime() + LEASE.plusSeconds(3).toNanos();
		Set<String> keys;
		long subscribers;
		do {
			keys = admin.keys(Workload.PREFIX + "*");
			keys.remove(Workload.PREFIX);
			// fair queues and waiter deadlines: "{slot tag}lock:<key>:queue" and so on
			keys.addAll(admin.keys("{*}" + Workload.PREFIX + "*"));
			subscribers = subscribers(admin);
			if (keys.isEmpty() && subscribers == 0) {
				return 0;
			}
			Thread.onSpinWait();
		}
		while (System.nanoTime() - deadline < 0);
		detail.append(", in Redis ").append(keys).append(" and ").append(subscribers).append(" subscribers");
		return keys.size() + (int) subscribers;
	}

	private static long subscribers(StringRedisTemplate admin) {
		try (RedisConnection connection = admin.getRequiredConnectionFactory().getConnection()) {
			Object reply = ((LettuceConnection) connection).execute("PUBSUB",
					new ArrayOutput<>(ByteArrayCodec.INSTANCE), "NUMSUB".getBytes(StandardCharsets.UTF_8),
					(Workload.PREFIX + "released").getBytes(StandardCharsets.UTF_8));
			return (reply instanceof List<?> list && list.size() == 2) ? ((Number) list.get(1)).longValue() : 0;
		}
	}

}
