package dev.distlock.leader;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderSettings;
import dev.distlock.LockOptions;
import dev.distlock.StaleTokenException;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.jdbc.JdbcFence;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.redis.RedisFencedValues;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.zookeeper.ZookeeperLockProvider;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * One candidate of a cross-JVM leader election, with the default settings of the client,
 * the store and the election: while it leads, it writes its term's token to one fenced
 * resource every few milliseconds (a {@link RedisFencedValues} value on Redis, a
 * {@link JdbcFence} check in a transaction on PostgreSQL and MariaDB, a Redis value for
 * locks in ZooKeeper), and prints what happened to each write. {@code hold <n>} on its
 * standard input makes the next write wait a second between the leadership check and the
 * write, as a leader paused mid-operation would; {@code gate <n>} begins a write that
 * reaches the resource only on {@code open <n>}, with the token of the term it began in.
 */
public final class LeaderWorker {

	/**
	 * Setting: {@code redis}, {@code zookeeper}, or a database ({@code postgres},
	 * {@code mariadb}).
	 */
	public static final String STORE = "store";

	static final String RESOURCE = "leader-resource";

	private LeaderWorker() {
	}

	/** Where the locks and the fenced resource live. */
	private interface Store {

		LockProvider provider();

		/** Writes {@code value} fenced by {@code token}. */
		void write(String value, long token);

	}

	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		String id = WorkerArgs.require(settings, "id");
		Store store = switch (WorkerArgs.require(settings, STORE)) {
			case "redis" -> redis(settings);
			case "zookeeper" -> zookeeper(settings);
			default -> jdbc(settings);
		};
		DefaultLockTemplate template = new DefaultLockTemplate(store.provider(), new RenewalScheduler(),
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		LeaderElections elections = new LeaderElections(template, id);
		LeaderElection election = elections.add("writer", LeaderSettings.DEFAULTS, new LeaderListener() {

			@Override
			public void granted(LeaderElection election, long token) {
				print("GRANTED " + token);
				print("GRANTED-AT " + token + " " + System.currentTimeMillis());
			}

			@Override
			public void revoked(LeaderElection election, long token, Reason reason) {
				print("REVOKED-AT " + token + " " + System.currentTimeMillis());
				print("REVOKED " + token + " " + reason);
			}

		});
		AtomicReference<String> hold = new AtomicReference<>();
		Thread writer = new Thread(() -> write(id, election, store, hold), "writer");
		writer.setDaemon(true);
		writer.start();
		elections.start();
		print("READY");
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
		Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();
		for (String line = in.readLine(); line != null; line = in.readLine()) {
			if (line.startsWith("hold ")) {
				hold.set(line.substring(5));
			}
			else if (line.startsWith("gate ")) {
				gate(line.substring(5), election, store, gates);
			}
			else if (line.startsWith("open ")) {
				gates.getOrDefault(line.substring(5), new CountDownLatch(0)).countDown();
			}
		}
		elections.close();
	}

	private static Store redis(Map<String, String> settings) {
		LettuceConnectionFactory connections = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", (int) WorkerArgs.number(settings, "redis.port")));
		connections.afterPropertiesSet();
		connections.start();
		RedisLockProvider provider = new RedisLockProvider(connections, "lock:", false);
		RedisFencedValues values = new RedisFencedValues(connections);
		return new Store() {

			@Override
			public LockProvider provider() {
				return provider;
			}

			@Override
			public void write(String value, long token) {
				values.set(RESOURCE, value, token);
			}

		};
	}

	/**
	 * Locks in ZooKeeper, the fenced value in Redis: tokens of any store fence any
	 * resource.
	 */
	private static Store zookeeper(Map<String, String> settings) {
		CuratorFramework client = CuratorFrameworkFactory.newClient(WorkerArgs.require(settings, "zookeeper.connect"),
				new ExponentialBackoffRetry(100, 5));
		client.start();
		ZookeeperLockProvider provider = new ZookeeperLockProvider(client);
		Store values = redis(settings);
		return new Store() {

			@Override
			public LockProvider provider() {
				return provider;
			}

			@Override
			public void write(String value, long token) {
				values.write(value, token);
			}

		};
	}

	private static Store jdbc(Map<String, String> settings) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(WorkerArgs.require(settings, "jdbc.url"));
		config.setUsername(WorkerArgs.require(settings, "jdbc.user"));
		config.setPassword(WorkerArgs.require(settings, "jdbc.password"));
		HikariDataSource dataSource = new HikariDataSource(config);
		JdbcLockProvider provider = JdbcLockProvider.builder(dataSource).build();
		provider.createTableIfMissing();
		JdbcFence fence = new JdbcFence(dataSource);
		fence.createTableIfMissing();
		TransactionTemplate transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
		return new Store() {

			@Override
			public LockProvider provider() {
				return provider;
			}

			@Override
			public void write(String value, long token) {
				transactions.executeWithoutResult((status) -> fence.check(RESOURCE, token));
			}

		};
	}

	private static void write(String id, LeaderElection election, Store store, AtomicReference<String> hold) {
		while (true) {
			OptionalLong term = election.currentToken();
			if (term.isPresent()) {
				long token = term.getAsLong();
				String held = hold.getAndSet(null);
				if (held != null) {
					print("HOLDING " + held + " " + token);
					LockSupport.parkNanos(1_000_000_000L);
				}
				try {
					store.write(id + ":" + token, token);
					print("WROTE " + token);
				}
				catch (StaleTokenException ex) {
					print("REFUSED " + token);
				}
				catch (RuntimeException ex) {
					// the store failed (a LockBackendException, or the transaction's
					// rollback): the writer carries on
					print("FAILED " + token + " " + ex);
				}
			}
			LockSupport.parkNanos(20_000_000L);
		}
	}

	/**
	 * One write that the leader begins now, with its term's token, and that reaches the
	 * resource only on {@code open <n>}: an operation whose leader was deposed while it
	 * ran. Runs beside the regular writes.
	 */
	private static void gate(String name, LeaderElection election, Store store, Map<String, CountDownLatch> gates) {
		OptionalLong term = election.currentToken();
		if (term.isEmpty()) {
			print("NOT-LEADER " + name);
			return;
		}
		long token = term.getAsLong();
		CountDownLatch open = new CountDownLatch(1);
		gates.put(name, open);
		print("GATED " + name + " " + token);
		Thread late = new Thread(() -> {
			try {
				open.await();
				store.write(name + ":" + token, token);
				print("LATE " + name + " WROTE " + token);
			}
			catch (StaleTokenException ex) {
				print("LATE " + name + " REFUSED " + token);
			}
			catch (RuntimeException ex) {
				// the store failed (a LockBackendException, or the transaction's
				// rollback)
				print("LATE " + name + " FAILED " + token + " " + ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}, "late-writer-" + name);
		late.setDaemon(true);
		late.start();
	}

	private static void print(String line) {
		System.out.println(line);
		System.out.flush();
	}

}
