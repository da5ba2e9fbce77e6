package dev.distlock.bench;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.provider.jdbctemplate.JdbcTemplateLockProvider;

import org.springframework.integration.jdbc.lock.DefaultLockRepository;
import org.springframework.integration.jdbc.lock.JdbcLockRegistry;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;

/**
 * The JDBC libraries as the benchmark drives them, each over a HikariCP pool of its own
 * with default settings (10 connections), on a database started by the harness (user and
 * password {@code distlock}). Each instance is one JVM's worth of clients; each creates
 * its table if missing.
 */
final class JdbcLib {

	/** The libraries, in report order. */
	static final List<String> NAMES = List.of("distlock-jdbc", "distlock-jdbc-handover", "shedlock-jdbc", "si-jdbc");

	private JdbcLib() {
	}

	static boolean isJdbc(String name) {
		return NAMES.contains(name);
	}

	/** A new client of library {@code name} on the database at {@code jdbcUrl}. */
	static Lib create(String name, String jdbcUrl) {
		HikariDataSource dataSource = pool(jdbcUrl);
		try {
			return switch (name) {
				case "distlock-jdbc" -> new Distlock(dataSource, name, HandoverSettings.OFF);
				case "distlock-jdbc-handover" -> new Distlock(dataSource, name, HandoverSettings.ON);
				case "shedlock-jdbc" -> new ShedLock(dataSource, jdbcUrl.startsWith("jdbc:postgresql:"));
				case "si-jdbc" -> new Integration(dataSource, jdbcUrl.startsWith("jdbc:postgresql:"));
				default -> throw new IllegalArgumentException("Unknown library " + name);
			};
		}
		catch (RuntimeException ex) {
			dataSource.close();
			throw ex;
		}
	}

	private static HikariDataSource pool(String jdbcUrl) {
		HikariConfig config = new HikariConfig();
		config.setJdbcUrl(jdbcUrl);
		config.setUsername("distlock");
		config.setPassword("distlock");
		return new HikariDataSource(config);
	}

	/**
	 * distlock's JDBC store through {@link DefaultLockTemplate}, as the Redis runner;
	 * with local hand-over as the settings say ({@code distlock-jdbc} has it off, to show
	 * the store alone; {@code distlock-jdbc-handover} has it on, the default).
	 */
	static final class Distlock implements Lib {

		private final HikariDataSource dataSource;

		private final String name;

		private final RenewalScheduler scheduler = new RenewalScheduler();

		private final JdbcLockProvider provider;

		private final DefaultLockTemplate template;

		Distlock(HikariDataSource dataSource, String name, HandoverSettings handover) {
			this.dataSource = dataSource;
			this.name = name;
			this.provider = new JdbcLockProvider(dataSource, "distlock_bench");
			this.provider.createTableIfMissing();
			this.template = new DefaultLockTemplate(this.provider, this.scheduler,
					Lib.Distlock.options(Duration.ofSeconds(30), false), LeaseLossListener.NONE, true,
					LockObserver.NONE, handover);
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public Unlock lock(String key) {
			Lease lease = this.template.acquire(key, LockOptions.defaults());
			return lease::release;
		}

		@Override
		public void close() {
			this.scheduler.close();
			this.provider.close();
			this.dataSource.close();
		}

	}

	/**
	 * ShedLock's {@code JdbcTemplateLockProvider} with {@code usingDbTime()}. ShedLock
	 * never waits (a busy lock is skipped), so waiting here is retrying every millisecond
	 * until acquired.
	 */
	static final class ShedLock implements Lib {

		private final HikariDataSource dataSource;

		private final JdbcTemplateLockProvider provider;

		ShedLock(HikariDataSource dataSource, boolean postgres) {
			this.dataSource = dataSource;
			JdbcTemplate jdbc = new JdbcTemplate(dataSource);
			jdbc.execute(postgres
					? "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP NOT NULL,"
							+ " locked_at TIMESTAMP NOT NULL, locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))"
					: "CREATE TABLE IF NOT EXISTS shedlock (name VARCHAR(64) NOT NULL, lock_until TIMESTAMP(3) NOT NULL,"
							+ " locked_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3),"
							+ " locked_by VARCHAR(255) NOT NULL, PRIMARY KEY (name))");
			this.provider = new JdbcTemplateLockProvider(
					JdbcTemplateLockProvider.Configuration.builder().withJdbcTemplate(jdbc).usingDbTime().build());
		}

		@Override
		public String name() {
			return "shedlock-jdbc";
		}

		@Override
		public Unlock lock(String key) {
			while (true) {
				Optional<SimpleLock> lock = this.provider
					.lock(new LockConfiguration(Instant.now(), key, Duration.ofSeconds(30), Duration.ZERO));
				if (lock.isPresent()) {
					return lock.get()::unlock;
				}
				LockSupport.parkNanos(1_000_000);
			}
		}

		@Override
		public void close() {
			this.dataSource.close();
		}

	}

	/**
	 * Spring Integration's {@code JdbcLockRegistry} with its defaults (10 s TTL, 100 ms
	 * polls).
	 */
	static final class Integration implements Lib {

		private final HikariDataSource dataSource;

		private final DefaultLockRepository repository;

		private final JdbcLockRegistry registry;

		Integration(HikariDataSource dataSource, boolean postgres) {
			this.dataSource = dataSource;
			new JdbcTemplate(dataSource).execute("CREATE TABLE IF NOT EXISTS INT_LOCK (LOCK_KEY CHAR(36) NOT NULL,"
					+ " REGION VARCHAR(100) NOT NULL, CLIENT_ID CHAR(36),"
					+ (postgres ? " CREATED_DATE TIMESTAMP NOT NULL, EXPIRED_AFTER TIMESTAMP NOT NULL,"
							: " CREATED_DATE DATETIME(6) NOT NULL, EXPIRED_AFTER DATETIME(6) NOT NULL,")
					+ " CONSTRAINT INT_LOCK_PK PRIMARY KEY (LOCK_KEY, REGION))");
			this.repository = new DefaultLockRepository(dataSource);
			this.repository.setTransactionManager(new DataSourceTransactionManager(dataSource));
			this.repository.afterPropertiesSet();
			this.repository.afterSingletonsInstantiated();
			this.repository.start();
			this.registry = new JdbcLockRegistry(this.repository);
		}

		@Override
		public String name() {
			return "si-jdbc";
		}

		@Override
		public Unlock lock(String key) {
			Lock lock = this.registry.obtain(key);
			lock.lock();
			return lock::unlock;
		}

		@Override
		public void close() {
			this.repository.close();
			this.dataSource.close();
		}

	}

}
