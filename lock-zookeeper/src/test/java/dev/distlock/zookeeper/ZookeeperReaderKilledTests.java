package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.LockHolder;
import dev.distlock.harness.fuzz.Templates;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reader JVM ({@link LockHolder} holding the read side) killed with {@code kill -9}:
 * its read hold outlives it until its session (the lease, 2 s) expires, and not longer;
 * other readers share the key meanwhile, a writer waits, then gets in with a greater
 * token.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("server")
class ZookeeperReaderKilledTests {

	private static final Duration LEASE = Duration.ofSeconds(2);

	private static final String KEY = "killed-reader";

	@Test
	void aKilledReadersHoldEndsWithItsSessionAndTheWriterGetsIn() throws Exception {
		try (StoreFixture store = new ZookeeperStoreFixture()) {
			Map<String, String> settings = LockHolder.settings(store, KEY, LEASE);
			settings.put(LockHolder.MODE, LockMode.READ.name());
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			try (ChildJvm reader = ChildJvm.start(LockHolder.class, settings)) {
				DefaultLockTemplate contender = Templates.of(Templates.answering(factory, settings), scheduler);
				long heldToken = Long.parseLong(reader.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				Optional<Lease> alongside = contender.tryAcquire(KEY, options(LockMode.READ, Duration.ZERO));
				assertThat(alongside).as("another reader shares the key").isPresent();
				alongside.get().release();
				assertThat(contender.tryAcquire(KEY, options(LockMode.WRITE, Duration.ZERO))).as("a writer").isEmpty();

				reader.kill();
				long killedAt = System.nanoTime();
				assertThat(contender.tryAcquire(KEY, options(LockMode.WRITE, Duration.ZERO)))
					.as("a writer at once: the killed reader's hold outlives it until its session expires")
					.isEmpty();
				Duration bound = LEASE.plusSeconds(1);
				Optional<Lease> writer = contender.tryAcquire(KEY, options(LockMode.WRITE, bound));
				long freedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
				assertThat(writer).as("the writer within %s of the kill", bound).isPresent();
				try (Lease lease = writer.get()) {
					assertThat(freedAfterMillis).isLessThanOrEqualTo(bound.toMillis());
					assertThat(lease.fencingToken()).isGreaterThan(heldToken);
				}
			}
			finally {
				scheduler.close();
				factory.close();
			}
		}
	}

	private static LockOptions options(LockMode mode, Duration waitTime) {
		return LockOptions.builder().mode(mode).waitTime(waitTime).leaseTime(LEASE).autoRenew(true).build();
	}

}
