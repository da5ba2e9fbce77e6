package dev.distlock.harness.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LockOptions;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Read-write locks and semaphores on a real store under network faults, for any store:
 * three templates, each over a provider of its own, stand for three JVMs; two reach the
 * store through a proxy that the store's test breaks and heals on a random schedule
 * ({@link #injectFault}), the third directly. A {@link FamilyWorkload} of three threads
 * per template runs throughout; {@link FamilyChecks} then finds no writer alongside a
 * reader or another writer, and never more permit holders than permits, among holders not
 * told of a loss. Leases are {@link #LEASE}, renewed. The default build runs each test
 * briefly ({@code distlock.faults.seconds}, 4 s by default); {@code -Psoak} runs them for
 * 130 s each.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
public abstract class AbstractFamilyNetworkFaultTests {

	/** The lease of every hold; the faults' lengths are set against it. */
	protected static final Duration LEASE = Duration.ofMillis(1200);

	private static final Duration DURATION = Duration.ofSeconds(Long.getLong("distlock.faults.seconds", 4));

	private final List<AutoCloseable> closeables = new ArrayList<>();

	/** Starts the store and the proxy in front of it, before each test. */
	protected abstract void startStore() throws Exception;

	/**
	 * A provider of its own: through the proxy, or straight to the store. What it needs
	 * closed goes to {@link #closeAfter}.
	 */
	protected abstract LockProvider provider(boolean proxied);

	/**
	 * Injects one fault chosen with {@code random} and lasts it out; the base heals it
	 * afterwards with {@link #heal()}.
	 */
	protected abstract void injectFault(Random random);

	/** Ends every fault of the proxy. */
	protected abstract void heal();

	/** Stops the proxy and the store, after every template and provider is closed. */
	protected abstract void stopStore() throws Exception;

	/** The seed of the read-write test's run; the semaphore's is one more. */
	protected abstract long seed();

	/** Closes {@code closeable} after the test, before what was registered earlier. */
	protected final <T extends AutoCloseable> T closeAfter(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	@BeforeEach
	void start() throws Exception {
		startStore();
	}

	@AfterEach
	void stop() throws Exception {
		heal();
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		stopStore();
	}

	@Test
	void neverAWriterAlongsideAReaderUnderNetworkFaults() throws Exception {
		FamilyWorkload workload = new FamilyWorkload("family-rw", 0, LEASE);
		run(workload, seed());
		List<FamilyHold> holds = workload.holds();
		assertThat(FamilyChecks.writerAlongsideOthers(holds)).as("outcomes " + workload.outcomes()).isEmpty();
		assertThat(holds).extracting(FamilyHold::kind).contains(FamilyHold.Kind.READ, FamilyHold.Kind.WRITE);
	}

	@Test
	void neverMorePermitHoldersThanPermitsUnderNetworkFaults() throws Exception {
		FamilyWorkload workload = new FamilyWorkload("family-sem", 3, LEASE);
		run(workload, seed() + 1);
		List<String> checked = FamilyChecks.moreThanPermits(workload.holds(), 3);
		assertThat(checked).as("outcomes " + workload.outcomes()).hasSize(1);
		assertThat(FamilyChecks.maxInside(checked)).as("holders at once").isBetween(2, 3);
	}

	/** Parks for {@code duration}: a fault's length is the point, not a wait. */
	protected static void lastOut(Duration duration) {
		LockSupport.parkNanos(duration.toNanos());
	}

	private void run(FamilyWorkload workload, long seed) throws Exception {
		RenewalScheduler scheduler = closeAfter(new RenewalScheduler());
		List<DefaultLockTemplate> templates = List.of(template(provider(true), scheduler),
				template(provider(true), scheduler), template(provider(false), scheduler));
		long end = System.nanoTime() + DURATION.toNanos();
		workload.start(templates, 3, end, seed);
		Random random = new Random(seed);
		int faults = 0;
		while (System.nanoTime() - end < 0) {
			lastOut(LEASE.dividedBy(2));
			injectFault(random);
			heal();
			faults++;
		}
		workload.join(LEASE.multipliedBy(6).plusSeconds(30));
		System.out.println(getClass().getSimpleName() + ": " + faults + " faults, " + workload.holds().size()
				+ " holds, outcomes " + workload.outcomes());
		assertThat(faults).as("faults injected").isPositive();
		assertThat(workload.outcomes()).as("some holds ended normally").containsKey("ok");
	}

	private DefaultLockTemplate template(LockProvider provider, RenewalScheduler scheduler) {
		return closeAfter(new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(LEASE.multipliedBy(2))
					.leaseTime(LEASE)
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build()));
	}

}
