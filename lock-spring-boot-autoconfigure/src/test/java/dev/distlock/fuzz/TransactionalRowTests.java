package dev.distlock.fuzz;

import java.time.Duration;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Two JVMs x 8 threads increment one database row inside {@code @Transactional} +
 * {@code @DistributedLock}, the lock taken while the transaction is already active. With
 * release after commit (the default) the row ends equal to the committed calls. The
 * control, with {@code distributed-lock.release-after-commit=false}, releases the lock
 * before the commit, and the next holder reads the old value: updates are lost.
 */
@Tag("server")
class TransactionalRowTests {

	private static final int THREADS = 8;

	private static final Duration DURATION = Duration.ofSeconds(3);

	@Test
	void withReleaseAfterCommitNoUpdateIsLost() throws Exception {
		long[] outcome = run(true);
		assertThat(outcome[2]).as("failed calls").isZero();
		assertThat(outcome[1]).as("row value against committed calls").isEqualTo(outcome[0]);
	}

	@Test
	void releasingBeforeTheCommitLosesUpdates() throws Exception {
		long[] outcome = run(false);
		assertThat(outcome[2]).as("failed calls").isZero();
		assertThat(outcome[1]).as("row value against committed calls: updates lost").isLessThan(outcome[0]);
	}

	/** Returns committed calls, the row's final value, and failed calls. */
	private static long[] run(boolean releaseAfterCommit) throws Exception {
		try (PostgresServer database = PostgresServer.start();
				RedisServer redis = RedisServer.start();
				ConfigurableApplicationContext context = RowApp.start(redis.port(), database.jdbcUrl(),
						releaseAfterCommit);
				ChildJvm worker = ChildJvm.start(RowWorker.class, Integer.toString(redis.port()), database.jdbcUrl(),
						Boolean.toString(releaseAfterCommit), Integer.toString(THREADS),
						Long.toString(DURATION.toMillis()))) {
			JdbcTemplate jdbc = context.getBean(JdbcTemplate.class);
			RowApp.createSchema(jdbc);
			worker.awaitLine("READY", Duration.ofSeconds(60));
			worker.send("GO");
			long[] local = RowApp.load(context.getBean(RowApp.Orders.class), THREADS, DURATION);
			String[] remote = worker.awaitLine("RESULT ", Duration.ofSeconds(60)).split(" ");
			assertThat(worker.awaitExit(Duration.ofSeconds(30))).isZero();
			long committed = local[0] + Long.parseLong(remote[1]);
			long failed = local[1] + Long.parseLong(remote[2]);
			Long value = jdbc.queryForObject("SELECT val FROM counter WHERE id = 1", Long.class);
			System.out.printf(
					"Row (release-after-commit=%s): value=%d, committed calls=%d (this JVM %d, other %d),"
							+ " lost updates=%d, failed=%d%n",
					releaseAfterCommit, value, committed, local[0], Long.parseLong(remote[1]), committed - value,
					failed);
			assertThat(local[0]).as("calls committed in this JVM").isPositive();
			assertThat(Long.parseLong(remote[1])).as("calls committed in the other JVM").isPositive();
			return new long[] { committed, value, failed };
		}
	}

}
