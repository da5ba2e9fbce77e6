package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.spi.LocalHandover;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A holder JVM ({@link PausedHolder}) stopped ({@code SIGSTOP}, as a long GC pause or a
 * frozen VM would) for twice its lease. No lock store can keep a second holder out then;
 * what distlock promises is that the second holder gets a greater fencing token, that the
 * {@link FencedRegister} rejects every write of the first holder from then on, and that
 * the first holder learns of the loss within one renewal interval of resuming. For any
 * store: a store's test extends this class and starts its store in {@link #startStore()}.
 */
public abstract class AbstractHolderPausedTests {

	/** The holder's lease. */
	protected static final Duration LEASE = Duration.ofMillis(1500);

	/** The lock's key. */
	protected static final String KEY = "paused-holder";

	/** Starts a fresh store and resource for one test; the test closes it. */
	protected abstract StoreFixture startStore();

	@Test
	void aHolderPausedPastItsLeaseIsFencedOffAndLearnsOfTheLossWithinOneRenewalInterval() throws Exception {
		try (StoreFixture store = startStore()) {
			Map<String, String> settings = LockHolder.settings(store, KEY, LEASE);
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			try (ChildJvm holder = ChildJvm.start(PausedHolder.class, settings);
					FencedRegister register = store.newResourceFactory().fencedRegister(settings)) {
				DefaultLockTemplate second = Templates.of(Templates.answering(factory, settings), scheduler);
				long firstToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				awaitAcceptedWrite(register, firstToken);

				holder.signal("STOP");
				long stoppedAt = System.nanoTime();
				LockOptions wait = LockOptions.builder()
					.waitTime(LEASE.multipliedBy(2))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.build();
				try (Lease lease = second.acquire(KEY, wait)) {
					assertThat(lease.fencingToken()).isGreaterThan(firstToken);
					assertThat(register.write(lease.fencingToken(), "second holder")).isTrue();
					// The fault is a pause of twice the lease; the first holder stays
					// stopped until then.
					LockSupport.parkNanos(stoppedAt + LEASE.multipliedBy(2).toNanos() - System.nanoTime());
					long resumedAt = System.nanoTime();
					holder.signal("CONT");
					String lost = holder.awaitLine("LOST ", Duration.ofSeconds(10));
					long detectionMillis = TimeUnit.NANOSECONDS
						.toMillis(Long.parseLong(lost.split(" ")[1]) - resumedAt);
					String[] done = holder.awaitLine("DONE ", Duration.ofSeconds(10)).split(" ");
					long acceptedAfterLoss = Long.parseLong(done[1]);
					long rejectedByHolder = Long.parseLong(done[2]);
					List<Long> accepted = register.acceptedTokens();
					long staleAccepted = accepted.subList(accepted.indexOf(lease.fencingToken()), accepted.size())
						.stream()
						.filter((token) -> token < lease.fencingToken())
						.count();
					System.out.printf(
							"Paused holder: loss known %d ms after SIGCONT (renewal interval %d ms);"
									+ " stale writes rejected %d, accepted %d (%s)%n",
							detectionMillis, LEASE.toMillis() / 3, register.rejected(), staleAccepted, lost);
					assertThat(detectionMillis).as("loss detection after SIGCONT, ms")
						.isLessThanOrEqualTo(LEASE.toMillis() / 3);
					assertThat(staleAccepted).as("stale writes accepted").isZero();
					assertThat(acceptedAfterLoss).as("writes of the first holder accepted after the loss").isZero();
					assertThat(rejectedByHolder).as("stale writes rejected").isPositive();
					assertThat(register.value()).isEqualTo("second holder");
					assertThat(lease.isHeld()).isTrue();
				}
				assertThat(holder.awaitExit(Duration.ofSeconds(10))).isZero();
				assertThat(holder.output()).contains("RELEASE LeaseLostException");
			}
			finally {
				scheduler.close();
				factory.close();
			}
		}
	}

	/**
	 * A holder JVM stopped for twice its lease while its threads pass the lock among
	 * themselves in memory ({@link HandoverPausedHolder}): the holder it was stopped in
	 * holds a token handed over locally, from the block its store acquisition reserved.
	 * The next holder, in this JVM, must get a token past that whole block, and no write
	 * of the stopped JVM with an older token may be accepted after it. Stores without
	 * local hand-over skip this test.
	 */
	@Test
	void aHolderPausedDuringARunOfLocalHandOversIsFencedOut() throws Exception {
		try (StoreFixture store = startStore()) {
			Map<String, String> settings = LockHolder.settings(store, KEY + "-handover", LEASE);
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			try (FencedRegister register = store.newResourceFactory().fencedRegister(settings)) {
				DefaultLockTemplate second = Templates.of(Templates.answering(factory, settings), scheduler);
				assumeTrue(second.supports(LocalHandover.class), "the store does not hand over locally");
				try (ChildJvm holder = ChildJvm.start(HandoverPausedHolder.class, settings)) {
					holder.awaitLine("RUNNING ", Duration.ofSeconds(30));
					holder.signal("STOP");
					long stoppedAt = System.nanoTime();
					LockOptions wait = LockOptions.builder()
						.waitTime(LEASE.multipliedBy(2))
						.leaseTime(Duration.ofSeconds(30))
						.autoRenew(true)
						.build();
					long secondToken;
					try (Lease lease = second.acquire(KEY + "-handover", wait)) {
						secondToken = lease.fencingToken();
						List<Long> before = register.acceptedTokens();
						long newestOfStopped = before.stream().mapToLong(Long::longValue).max().orElseThrow();
						assertThat(secondToken).as("the next holder's token against the stopped JVM's newest")
							.isGreaterThan(newestOfStopped);
						assertThat(register.write(secondToken, "second holder")).isTrue();
						LockSupport.parkNanos(stoppedAt + LEASE.multipliedBy(2).toNanos() - System.nanoTime());
						holder.signal("CONT");
						holder.awaitLine("LOST ", Duration.ofSeconds(10));
						assertThat(lease.isHeld()).isTrue();
					}
					String[] done = holder.awaitLine("DONE ", Duration.ofSeconds(60)).split(" ");
					long pausedToken = Long.parseLong(holder.awaitLine("RUNNING ", Duration.ZERO).split(" ")[2]);
					assertThat(secondToken).as("the next holder's token against the paused holder's")
						.isGreaterThan(pausedToken);
					List<Long> accepted = register.acceptedTokens();
					long staleAccepted = accepted.subList(accepted.indexOf(secondToken), accepted.size())
						.stream()
						.filter((token) -> token < secondToken)
						.count();
					System.out.println("Holder paused during hand-overs: " + String.join(" ", done)
							+ "; stale writes accepted " + staleAccepted + ", rejected " + register.rejected());
					assertThat(staleAccepted).as("stale writes accepted").isZero();
					assertThat(Long.parseLong(done[1])).as("writes of lost holders accepted").isZero();
					assertThat(Long.parseLong(done[2])).as("stale writes of the paused holder rejected").isPositive();
					assertThat(Long.parseLong(done[3])).as("local hand-overs")
						.isGreaterThanOrEqualTo(HandoverPausedHolder.RUNNING_AFTER);
					assertThat(holder.awaitExit(Duration.ofSeconds(30))).isZero();
				}
			}
			finally {
				scheduler.close();
				factory.close();
			}
		}
	}

	private static void awaitAcceptedWrite(FencedRegister register, long token) {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!register.acceptedTokens().contains(token)) {
			assertThat(System.nanoTime() - deadline).as("first holder's write accepted within 10s").isNegative();
			LockSupport.parkNanos(1_000_000);
		}
	}

}
