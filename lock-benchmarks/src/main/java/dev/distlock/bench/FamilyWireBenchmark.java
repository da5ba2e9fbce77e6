package dev.distlock.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.redisson.Redisson;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RReadWriteLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The wire cost of read-write locks and semaphores, distlock against Redisson's
 * {@code RReadWriteLock} and {@code RPermitExpirableSemaphore} on one
 * {@code redis-server}: per uncontended cycle (acquire and release) the commands clients
 * send ({@code MONITOR}) and the commands run inside scripts ({@code INFO commandstats}
 * less the clients' own), and the commands the watchdog sends to keep 100 read holds for
 * a few renewal intervals. Counted, not timed, so the figures do not depend on the
 * machine's load. Writes {@code RESULTS-rwsem.md}.
 */
public final class FamilyWireBenchmark {

	private static final int CYCLES = Integer.getInteger("bench.family.cycles", 300);

	private static final int HELD = 100;

	private static final Duration LEASE = Duration.ofSeconds(3);

	private FamilyWireBenchmark() {
	}

	public static void main(String[] args) throws Exception {
		Path output = Path.of((args.length > 0) ? args[0] : "RESULTS-rwsem.md");
		List<String> rows = new ArrayList<>();
		try (RedisServer redis = RedisServer.start()) {
			int port = redis.port();
			RedisClient statsClient = RedisClient.create("redis://127.0.0.1:" + port);
			try (StatefulRedisConnection<String, String> stats = statsClient.connect()) {
				LettuceConnectionFactory factory = Lib.connectionFactory(port);
				RenewalScheduler scheduler = new RenewalScheduler();
				RedisLockProvider provider = new RedisLockProvider(factory, "distlock:", false);
				DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
						LockOptions.builder()
							.waitTime(Duration.ofSeconds(5))
							.leaseTime(LEASE)
							.autoRenew(true)
							.retryInterval(Duration.ofMillis(100))
							.build());
				Config config = new Config();
				config.useSingleServer().setAddress("redis://127.0.0.1:" + port);
				config.setLockWatchdogTimeout(LEASE.toMillis());
				RedissonClient redisson = Redisson.create(config);
				try {
					LockOptions read = LockOptions.builder().mode(LockMode.READ).build();
					LockOptions permit = LockOptions.builder().permits(5).build();
					RReadWriteLock rw = redisson.getReadWriteLock("redisson:rw");
					RPermitExpirableSemaphore semaphore = redisson.getPermitExpirableSemaphore("redisson:sem");
					semaphore.trySetPermits(5);
					rows.add(cycle(port, stats, "read lock cycle", () -> template.acquire("rw", read).release(), () -> {
						rw.readLock().lock();
						rw.readLock().unlock();
					}));
					rows.add(cycle(port, stats, "write lock cycle",
							() -> template.acquire("rw", LockOptions.defaults()).release(), () -> {
								rw.writeLock().lock();
								rw.writeLock().unlock();
							}));
					rows.add(cycle(port, stats, "semaphore permit cycle",
							() -> template.acquire("sem", permit).release(),
							() -> semaphore.release(acquire(semaphore))));
					rows.add(renewal(port, stats, template, redisson));
				}
				finally {
					redisson.shutdown();
					template.close();
					scheduler.close();
					provider.close();
					factory.destroy();
				}
			}
			finally {
				statsClient.shutdown();
			}
		}
		write(output, rows);
	}

	private static String acquire(RPermitExpirableSemaphore semaphore) {
		try {
			return semaphore.acquire(LEASE.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static String cycle(int port, StatefulRedisConnection<String, String> stats, String name, Runnable distlock,
			Runnable redisson) throws Exception {
		double[] ours = count(port, stats, distlock, CYCLES);
		double[] theirs = count(port, stats, redisson, CYCLES);
		return String.format(Locale.ROOT, "| %s | %.2f / %.2f | %.2f / %.2f |", name, ours[0], ours[1], theirs[0],
				theirs[1]);
	}

	/** Client commands and commands inside scripts per run of {@code action}. */
	private static double[] count(int port, StatefulRedisConnection<String, String> stats, Runnable action, int runs)
			throws Exception {
		for (int i = 0; i < 20; i++) {
			action.run();
		}
		try (CommandMonitor monitor = new CommandMonitor(port)) {
			long before = total(stats);
			long clientBefore = monitor.total();
			for (int i = 0; i < runs; i++) {
				action.run();
			}
			long settled = settle(monitor);
			long client = settled - clientBefore;
			long all = total(stats) - before;
			return new double[] { (double) client / runs, (double) (all - client) / runs };
		}
	}

	/**
	 * Commands sent to keep {@value #HELD} read holds for four renewal intervals (a third
	 * of the {@code LEASE} each), per interval.
	 */
	private static String renewal(int port, StatefulRedisConnection<String, String> stats, DefaultLockTemplate template,
			RedissonClient redisson) throws Exception {
		long window = LEASE.toNanos() / 3 * 4;
		List<Lease> leases = new ArrayList<>();
		for (int i = 0; i < HELD; i++) {
			leases.add(template.acquire("held-" + i, LockOptions.builder().mode(LockMode.READ).build()));
		}
		double[] ours = window(port, stats, window);
		leases.forEach(Lease::release);
		List<RReadWriteLock> locks = new ArrayList<>();
		for (int i = 0; i < HELD; i++) {
			RReadWriteLock lock = redisson.getReadWriteLock("redisson:held-" + i);
			lock.readLock().lock();
			locks.add(lock);
		}
		double[] theirs = window(port, stats, window);
		locks.forEach((lock) -> lock.readLock().unlock());
		return String.format(Locale.ROOT,
				"| renewal of %d read holds, per renewal interval (1 s) | %.2f / %.2f | %.2f / %.2f |", HELD,
				ours[0] / 4, ours[1] / 4, theirs[0] / 4, theirs[1] / 4);
	}

	private static double[] window(int port, StatefulRedisConnection<String, String> stats, long nanos)
			throws Exception {
		try (CommandMonitor monitor = new CommandMonitor(port)) {
			long before = total(stats);
			long clientBefore = monitor.total();
			LockSupport.parkNanos(nanos);
			long client = settle(monitor) - clientBefore;
			long all = total(stats) - before;
			return new double[] { client, all - client };
		}
	}

	/**
	 * The monitor's count once it stops moving (it reads the stream on its own thread).
	 */
	private static long settle(CommandMonitor monitor) {
		long last = -1;
		long now = monitor.total();
		while (now != last) {
			last = now;
			LockSupport.parkNanos(50_000_000);
			now = monitor.total();
		}
		return now;
	}

	/** Every command Redis ran, by {@code INFO commandstats}, less the INFO calls. */
	private static long total(StatefulRedisConnection<String, String> stats) {
		Map<String, Long> calls = new TreeMap<>();
		for (String line : stats.sync().info("commandstats").split("\r?\n")) {
			if (line.startsWith("cmdstat_")) {
				String name = line.substring(8, line.indexOf(':'));
				int from = line.indexOf("calls=") + 6;
				calls.put(name, Long.parseLong(line.substring(from, line.indexOf(',', from))));
			}
		}
		calls.remove("info");
		calls.remove("monitor");
		return calls.values().stream().mapToLong(Long::longValue).sum();
	}

	private static void write(Path output, List<String> rows) throws Exception {
		StringBuilder text = new StringBuilder();
		text.append("# Read-write locks and semaphores: wire cost against Redisson\n\n");
		text.append("Written by `FamilyWireBenchmark` on ")
			.append(LocalDate.now())
			.append(" (redis-server ")
			.append("bundled with lock-test-harness-redis, JDK ")
			.append(Runtime.version().feature())
			.append("). Commands per operation: clients' own (counted with `MONITOR`) / run inside scripts")
			.append(" (`INFO commandstats` less the clients' own), averaged over ")
			.append(CYCLES)
			.append(" uncontended cycles of acquire and release on one thread. distlock goes through")
			.append(" `DefaultLockTemplate` over `RedisLockProvider`; Redisson's `RReadWriteLock` and")
			.append(" `RPermitExpirableSemaphore` (5 permits, a lease of 3 s per permit) with its defaults,")
			.append(" its watchdog set to the same 3 s lease.\n\n");
		text.append("| operation | distlock: client / in scripts | Redisson: client / in scripts |\n");
		text.append("| --- | --- | --- |\n");
		rows.forEach((row) -> text.append(row).append('\n'));
		text.append("\nWhat the figures include. A distlock read hold is one field of a hash at the lock key with")
			.append(" its own expiry on the server's clock, so a dead reader's hold ends at its own lease (Redisson")
			.append(" keeps one key per hold and renews them all: its PR #7098); a waiting writer's intent is looked")
			.append(" up on each read (no writer starvation, Redisson #5379). A distlock permit has its own fencing")
			.append(" token and owner-checked release and is renewed by the watchdog; Redisson's expirable permit is")
			.append(" not renewed (it lapses after its lease time even while its holder works) and its expiry is the")
			.append(" client's clock. Renewal: distlock sends one script call per renewal batch; inside it, each read")
			.append(" hold costs a check, a write of its own expiry and the hash's TTL (`HGET`, `HSET`, `PTTL`,")
			.append(" `PEXPIRE`), where Redisson's per-hold keys cost fewer commands but cannot expire one dead")
			.append(" holder alone.\n");
		Files.writeString(output, text.toString());
		System.out.println(text);
	}

}
