package dev.distlock.jdbc;

import java.sql.Timestamp;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.distlock.DistributedLatch;
import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.FencedRegister;
import dev.distlock.harness.fuzz.LockHolder;
import dev.distlock.harness.fuzz.Templates;
import dev.distlock.harness.jdbc.DatabaseServer;
import dev.distlock.jdbc.FamilyMemberHolder.Member;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder JVM of a member of the lock family ({@link FamilyMemberHolder}) paused past
 * its lease or killed, on a database server:
 * <ul>
 * <li>paused ({@code SIGSTOP}) for two leases, holding a read lock, a write lock, a
 * permit or a multi-key lock: the key stays held while the lease runs, then another
 * holder gets in with a greater token; once resumed the paused holder is told of its loss
 * within one renewal interval, its fenced writes are refused from the other holder's on,
 * and its release throws;</li>
 * <li>killed ({@code kill -9}) holding one of those: the key is not free at once, and is
 * free again within the lease and a second, with a greater token; killed after counting a
 * latch down: counted once, whoever sends that participant's count-down again.</li>
 * </ul>
 * The default build runs one case of each fault (a paused reader, a killed permit
 * holder); {@code -Psoak} ({@code distlock.soak}) runs every member.
 */
@Tag("server")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
abstract class AbstractJdbcFamilyHolderTests {

	/** The paused holder's lease, as for the mutex's paused holder. */
	private static final Duration PAUSED_LEASE = Duration.ofMillis(1500);

	/** The killed holder's lease, as for the mutex's killed holder. */
	private static final Duration KILLED_LEASE = Duration.ofSeconds(2);

	/** The database server the holders and this JVM share. */
	abstract DatabaseServer server();

	static List<Member> pausedMembers() {
		return Boolean.getBoolean("distlock.soak") ? List.of(Member.READ, Member.WRITE, Member.PERMIT, Member.MULTI)
				: List.of(Member.READ);
	}

	static List<Member> killedMembers() {
		return Boolean.getBoolean("distlock.soak") ? Arrays.asList(Member.values()) : List.of(Member.PERMIT);
	}

	@ParameterizedTest(name = "a paused holder of a {0} hold is fenced off and told")
	@MethodSource("pausedMembers")
	void aHolderPausedPastItsLeaseIsFencedOffAndTold(Member member) throws Exception {
		String key = "paused-" + member + "-" + UUID.randomUUID();
		try (StoreFixture store = JdbcStoreFixture.on(server())) {
			Map<String, String> settings = LockHolder.settings(store, key, PAUSED_LEASE);
			settings.put(FamilyMemberHolder.MEMBER, member.name());
			settings.put(FamilyMemberHolder.WRITES, "true");
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			// The tables made before the holder starts, not by both JVMs at once.
			DefaultLockTemplate other = Templates.of(Templates.answering(factory, settings), scheduler);
			try (ChildJvm holder = ChildJvm.start(FamilyMemberHolder.class, settings);
					FencedRegister register = store.newResourceFactory().fencedRegister(settings)) {
				long firstToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				Conditions.await("the holder's first write accepted", Duration.ofSeconds(10),
						() -> register.acceptedTokens().contains(firstToken));

				holder.signal("STOP");
				long stoppedAt = System.nanoTime();
				assertThat(answered(() -> other.tryAcquire(key, contender(member, Duration.ZERO))))
					.as("the %s hold of a stopped holder, while its lease runs", member)
					.isEmpty();
				try (Lease lease = answered(
						() -> other.acquire(key, contender(member, PAUSED_LEASE.multipliedBy(2))))) {
					long gotInAfter = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stoppedAt);
					assertThat(lease.fencingToken()).as("the next holder's token").isGreaterThan(firstToken);
					assertThat(register.write(lease.fencingToken(), "second holder")).isTrue();
					// The fault is a pause of twice the lease; the holder stays stopped
					// until then.
					LockSupport.parkNanos(stoppedAt + PAUSED_LEASE.multipliedBy(2).toNanos() - System.nanoTime());
					long resumedAt = System.nanoTime();
					holder.signal("CONT");
					String lost = holder.awaitLine("LOST ", Duration.ofSeconds(10));
					long detectionMillis = TimeUnit.NANOSECONDS
						.toMillis(Long.parseLong(lost.split(" ")[1]) - resumedAt);
					String[] done = holder.awaitLine("DONE ", Duration.ofSeconds(10)).split(" ");
					List<Long> accepted = register.acceptedTokens();
					long staleAccepted = accepted.subList(accepted.indexOf(lease.fencingToken()), accepted.size())
						.stream()
						.filter((token) -> token < lease.fencingToken())
						.count();
					System.out.printf(
							"Paused %s holder: the other in after %d ms, loss known %d ms after SIGCONT;"
									+ " stale writes rejected %d, accepted %d%n",
							member, gotInAfter, detectionMillis, register.rejected(), staleAccepted);
					assertThat(staleAccepted).as("stale writes accepted").isZero();
					assertThat(Long.parseLong(done[1])).as("writes of the paused holder accepted after its loss")
						.isZero();
					assertThat(Long.parseLong(done[2])).as("writes of the paused holder refused").isPositive();
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

	@ParameterizedTest(name = "a killed holder of a {0} hold frees it within its lease")
	@MethodSource("killedMembers")
	void aKilledHolderFreesItsHoldWithinItsLease(Member member) throws Exception {
		String key = "killed-" + member + "-" + UUID.randomUUID();
		try (StoreFixture store = JdbcStoreFixture.on(server())) {
			Map<String, String> settings = LockHolder.settings(store, key, KILLED_LEASE);
			settings.put(FamilyMemberHolder.MEMBER, member.name());
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			DefaultLockTemplate other = Templates.of(Templates.answering(factory, settings), scheduler);
			try (ChildJvm holder = ChildJvm.start(FamilyMemberHolder.class, settings)) {
				if (member == Member.LATCH) {
					aKilledParticipantIsCountedOnce(holder, other, key);
					return;
				}
				long heldToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				// Renewed once, so that only the kill can end the hold.
				Timestamp first = leaseEnd(member, key);
				Conditions.await("the holder's lease renewed", KILLED_LEASE, () -> leaseEnd(member, key).after(first));
				assertThat(other.tryAcquire(key, contender(member, Duration.ZERO))).as("held after a renewal")
					.isEmpty();

				holder.kill();
				long killedAt = System.nanoTime();
				assertThat(other.tryAcquire(key, contender(member, Duration.ZERO)))
					.as("the %s hold freed at once: it must outlive the crash until its lease runs out", member)
					.isEmpty();
				Duration bound = KILLED_LEASE.plusSeconds(5);
				Optional<Lease> next = other.tryAcquire(key, contender(member, bound));
				long freedAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
				assertThat(next).as("the %s hold taken within %s of the kill", member, bound).isPresent();
				try (Lease lease = next.get()) {
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

	/**
	 * The killed JVM counted its participant down on a latch of two: that count stays,
	 * the same participant's count-down sent again (as a retry from another instance)
	 * counts nothing, and the next distinct participant opens the latch.
	 */
	private static void aKilledParticipantIsCountedOnce(ChildJvm holder, DefaultLockTemplate other, String key)
			throws Exception {
		assertThat(holder.awaitLine("COUNTED ", Duration.ofSeconds(30))).isEqualTo("COUNTED 1");
		holder.kill();
		DistributedLatch latch = other.latch(key, 2, Duration.ofMinutes(5));
		assertThat(latch.getCount()).as("the killed participant's count kept").isOne();
		latch.countDown(FamilyMemberHolder.PARTICIPANT);
		assertThat(latch.getCount()).as("the killed participant's count-down sent again").isOne();
		assertThat(latch.await(Duration.ZERO)).isFalse();
		latch.countDown("next-participant");
		assertThat(latch.getCount()).isZero();
		assertThat(latch.await(Duration.ofSeconds(5))).isTrue();
	}

	/**
	 * The call's answer, asked again while the database is too loaded to answer within
	 * the store timeout.
	 */
	private static <T> T answered(Supplier<T> call) {
		for (int attempt = 1;; attempt++) {
			try {
				return call.get();
			}
			catch (LockBackendException ex) {
				if (attempt == 3) {
					throw ex;
				}
			}
		}
	}

	/** The end of the latest lease of {@code member}'s rows of {@code key}. */
	private Timestamp leaseEnd(Member member, String key) {
		String table = switch (member) {
			case READ -> "fuzz_lock_reader";
			case PERMIT -> "fuzz_lock_permit";
			default -> "fuzz_lock";
		};
		return new JdbcTemplate(server().dataSource())
			.queryForObject("SELECT MAX(expires_at) FROM " + table + " WHERE name = ?", Timestamp.class, key);
	}

	/**
	 * The options of a holder that {@code member}'s hold keeps out: a writer for a read
	 * hold, the same kind otherwise, a plain lock on the first key for a multi-key lock.
	 */
	private static LockOptions contender(Member member, Duration wait) {
		LockOptions.Builder builder = LockOptions.builder()
			.waitTime(wait)
			.leaseTime(Duration.ofSeconds(30))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(20));
		if (member == Member.PERMIT) {
			builder.permits(1);
		}
		else {
			builder.mode(LockMode.WRITE);
		}
		return builder.build();
	}

}
