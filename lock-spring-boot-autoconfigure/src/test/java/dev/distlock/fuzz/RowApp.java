package dev.distlock.fuzz;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import javax.sql.DataSource;

import dev.distlock.DistributedLock;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import org.h2.jdbcx.JdbcConnectionPool;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.annotation.EnableTransactionManagement;
import org.springframework.transaction.annotation.Transactional;

/**
 * The application of {@link TransactionalRowTests}, run alike in the test JVM and in
 * {@link RowWorker}: an order service whose {@code @Transactional} method calls a
 * {@code @DistributedLock} method that reads a counter row and writes it back
 * incremented, then does more work in the same transaction before it commits. The lock is
 * taken while the transaction is active, so only release after commit keeps the next
 * holder from reading the row before this update is committed.
 */
@Configuration(proxyBeanMethods = false)
@EnableTransactionManagement
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
		DistributedLockAutoConfiguration.class })
public class RowApp {

	static ConfigurableApplicationContext start(int redisPort, String jdbcUrl, boolean releaseAfterCommit) {
		return new SpringApplicationBuilder(RowApp.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.properties("spring.main.banner-mode=off", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + redisPort,
					"distributed-lock.release-after-commit=" + releaseAfterCommit, "distributed-lock.wait-time=20s",
					"distributed-lock.retry-interval=50ms", "distlock.test.jdbc-url=" + jdbcUrl)
			.run();
	}

	@Bean(destroyMethod = "dispose")
	JdbcConnectionPool dataSource(org.springframework.core.env.Environment environment) {
		return JdbcConnectionPool.create(environment.getRequiredProperty("distlock.test.jdbc-url"), "sa", "");
	}

	@Bean
	PlatformTransactionManager transactionManager(DataSource dataSource) {
		return new DataSourceTransactionManager(dataSource);
	}

	@Bean
	JdbcTemplate jdbcTemplate(DataSource dataSource) {
		return new JdbcTemplate(dataSource);
	}

	@Bean
	Counter counter(JdbcTemplate jdbc) {
		return new Counter(jdbc);
	}

	@Bean
	Orders orders(Counter counter, JdbcTemplate jdbc) {
		return new Orders(counter, jdbc);
	}

	/**
	 * Runs {@code threads} threads placing orders for {@code duration}; returns successes
	 * and failures.
	 */
	static long[] load(Orders orders, int threads, Duration duration) throws InterruptedException {
		LongAdder successes = new LongAdder();
		LongAdder failures = new LongAdder();
		long end = System.nanoTime() + duration.toNanos();
		List<Thread> workers = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			Thread worker = new Thread(() -> {
				while (System.nanoTime() - end < 0) {
					try {
						orders.place();
						successes.increment();
					}
					catch (RuntimeException ex) {
						failures.increment();
						System.out.println("FAILURE " + ex);
					}
				}
			});
			workers.add(worker);
			worker.start();
		}
		for (Thread worker : workers) {
			worker.join(duration.plusSeconds(60).toMillis());
		}
		return new long[] { successes.sum(), failures.sum() };
	}

	static void createSchema(JdbcTemplate jdbc) {
		jdbc.execute("CREATE TABLE counter (id INT PRIMARY KEY, val BIGINT NOT NULL)");
		jdbc.execute("CREATE TABLE audit (id BIGINT AUTO_INCREMENT PRIMARY KEY, val BIGINT NOT NULL)");
		jdbc.update("INSERT INTO counter (id, val) VALUES (1, 0)");
	}

	/** The locked read-increment-write. */
	public static class Counter {

		private final JdbcTemplate jdbc;

		Counter(JdbcTemplate jdbc) {
			this.jdbc = jdbc;
		}

		@DistributedLock(key = "'counter-row'")
		public long increment() {
			Long current = this.jdbc.queryForObject("SELECT val FROM counter WHERE id = 1", Long.class);
			long next = ((current != null) ? current : 0) + 1;
			this.jdbc.update("UPDATE counter SET val = ? WHERE id = 1", next);
			return next;
		}

	}

	/** The transaction around the locked call, with work after it. */
	public static class Orders {

		private final Counter counter;

		private final JdbcTemplate jdbc;

		Orders(Counter counter, JdbcTemplate jdbc) {
			this.counter = counter;
			this.jdbc = jdbc;
		}

		@Transactional
		public void place() {
			long value = this.counter.increment();
			this.jdbc.update("INSERT INTO audit (val) VALUES (?)", value);
			// The rest of the transaction's work, between the locked call and the commit.
			try {
				TimeUnit.MILLISECONDS.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

}
