package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.harness.fuzz.FencedRegister;
import dev.distlock.harness.fuzz.LockHolder;
import dev.distlock.harness.fuzz.Templates;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.zookeeper.FamilyHolderJvm.Member;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A holder JVM ({@link FamilyHolderJvm}) of a read lock, a write lock, a semaphore's one
 * permit or a multi-key lock, stopped with {@code SIGSTOP} past its session or killed
 * with {@code kill -9}, against a contender in this JVM. Sessions time out after the
 * lease (1.5 s), on a server ticking every 100 ms.
 *
 * <p>
 * Paused: the contender does not get in while the holder's session lives, and gets in
 * only once the holder's node has gone with its expired session, with a greater token;
 * once resumed, the holder is told of its loss by its listener, unasked and before its
 * release (which fails too), and none of its fenced writes is accepted after the
 * contender's. Killed: the holder's locks and permit outlive it until its session
 * expires, and no longer: the contender gets them within its wait (a semaphore's permit
 * and a multi-key lock here; a killed reader's and writer's are tested beside the
 * mutex's).
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("server")
class ZookeeperFamilyHolderFaultTests {

	private static final Duration LEASE = Duration.ofMillis(1500);

	private static final String KEY = "family-holder";

	@ParameterizedTest
	@EnumSource(Member.class)
	void aHolderPausedPastItsSessionIsOverlappedOnlyOnceItExpiredAndIsTold(Member member) throws Exception {
		try (ZookeeperStoreFixture store = new ZookeeperStoreFixture()) {
			Map<String, String> settings = holderSettings(store, member);
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			try (ChildJvm holder = ChildJvm.start(FamilyHolderJvm.class, settings);
					FencedRegister register = store.newResourceFactory().fencedRegister(settings);
					CuratorFramework admin = TestZookeeper.client(connectString(settings))) {
				DefaultLockTemplate contender = Templates.of(Templates.answering(factory, contenderSettings(settings)),
						scheduler);
				long firstToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				Conditions.await("the holder's first write accepted", Duration.ofSeconds(10),
						() -> register.acceptedTokens().contains(firstToken));

				holder.signal("STOP");
				long stoppedAt = System.nanoTime();
				assertThat(member.contend(contender, KEY, FamilyHolderJvm.options(LEASE).waitTime(Duration.ZERO)))
					.as("the contender at once: the paused holder's session lives")
					.isEmpty();
				Optional<? extends Lease> second = member.contend(contender, KEY,
						FamilyHolderJvm.options(Duration.ofSeconds(30)).waitTime(LEASE.multipliedBy(2).plusSeconds(2)));
				assertThat(second).as("the contender once the paused holder's session expired").isPresent();
				try (Lease lease = second.get()) {
					long secondToken = member.token(lease, KEY);
					assertThat(nodeWithToken(admin, firstToken))
						.as("the paused holder's node, when the contender got in: gone with its session")
						.isEmpty();
					assertThat(secondToken).isGreaterThan(firstToken);
					assertThat(register.write(secondToken, "second holder")).isTrue();
					// The fault is a pause of twice the lease; the holder stays stopped
					// until then.
					LockSupport.parkNanos(stoppedAt + LEASE.multipliedBy(2).toNanos() - System.nanoTime());
					holder.signal("CONT");
					String lost = holder.awaitLine("LOST ", Duration.ofSeconds(10));
					String[] done = holder.awaitLine("DONE ", Duration.ofSeconds(10)).split(" ");
					List<Long> accepted = register.acceptedTokens();
					long staleAccepted = accepted.subList(accepted.indexOf(secondToken), accepted.size())
						.stream()
						.filter((token) -> token < secondToken)
						.count();
					System.out.println(member + " holder paused: " + lost + "; " + String.join(" ", done)
							+ "; stale writes accepted " + staleAccepted);
					assertThat(staleAccepted).as("stale writes accepted").isZero();
					assertThat(Long.parseLong(done[1])).as("writes of the paused holder accepted after its loss")
						.isZero();
					assertThat(Long.parseLong(done[2])).as("stale writes of the paused holder rejected").isPositive();
					assertThat(register.value()).isEqualTo("second holder");
					assertThat(lease.isHeld()).isTrue();
				}
				assertThat(holder.awaitExit(Duration.ofSeconds(30))).isZero();
				assertThat(holder.output()).as("the paused holder's release").contains("RELEASE LeaseLostException");
			}
			finally {
				scheduler.close();
				factory.close();
			}
		}
	}

	/**
	 * A killed reader and writer are {@link ZookeeperReaderKilledTests}' and
	 * {@link ZookeeperCrossJvmTests}'.
	 */
	@ParameterizedTest
	@EnumSource(names = { "PERMIT", "MULTI" })
	void aKilledHoldersLocksAreFreeOnceItsSessionExpires(Member member) throws Exception {
		try (ZookeeperStoreFixture store = new ZookeeperStoreFixture()) {
			Map<String, String> settings = holderSettings(store, member);
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory factory = store.newProviderFactory();
			try (ChildJvm holder = ChildJvm.start(FamilyHolderJvm.class, settings);
					FencedRegister register = store.newResourceFactory().fencedRegister(settings);
					CuratorFramework admin = TestZookeeper.client(connectString(settings))) {
				DefaultLockTemplate contender = Templates.of(Templates.answering(factory, contenderSettings(settings)),
						scheduler);
				long firstToken = Long.parseLong(holder.awaitLine("HELD ", Duration.ofSeconds(30)).substring(5));
				Conditions.await("the holder's first write accepted", Duration.ofSeconds(10),
						() -> register.acceptedTokens().contains(firstToken));

				holder.kill();
				assertThat(member.contend(contender, KEY, FamilyHolderJvm.options(LEASE).waitTime(Duration.ZERO)))
					.as("the contender at once: the killed holder's node outlives it until its session expires")
					.isEmpty();
				Optional<? extends Lease> second = member.contend(contender, KEY,
						FamilyHolderJvm.options(LEASE).waitTime(LEASE.plusSeconds(2)));
				assertThat(second).as("the contender within the session timeout and a margin").isPresent();
				try (Lease lease = second.get()) {
					assertThat(member.token(lease, KEY)).isGreaterThan(firstToken);
					if (member == Member.MULTI) {
						assertThat(
								contender.tryAcquire(KEY + ":a", LockOptions.builder().waitTime(Duration.ZERO).build()))
							.as("the killed holder's other key")
							.isPresent()
							.get()
							.satisfies(Lease::release);
					}
				}
				assertThat(nodeWithToken(admin, firstToken)).as("the killed holder's node").isEmpty();
			}
			finally {
				scheduler.close();
				factory.close();
			}
		}
	}

	private static Map<String, String> holderSettings(ZookeeperStoreFixture store, Member member) {
		Map<String, String> settings = LockHolder.settings(store, KEY, LEASE);
		settings.put(FamilyHolderJvm.MEMBER, member.name());
		return settings;
	}

	/**
	 * The contender's settings: the longest session the server allows, so that a loaded
	 * machine's stalls in this JVM (which runs the server too) do not cost it its lock.
	 */
	private static Map<String, String> contenderSettings(Map<String, String> settings) {
		Map<String, String> contender = new java.util.LinkedHashMap<>(settings);
		contender.remove(LockHolder.LEASE_MILLIS);
		return contender;
	}

	private static String connectString(Map<String, String> settings) {
		return WorkerArgs.require(settings, ZookeeperProviderFactory.CONNECT);
	}

	/**
	 * The lock or permit node whose {@code czxid} (its token) is {@code token}, if it is
	 * still there.
	 */
	private static Optional<String> nodeWithToken(CuratorFramework admin, long token) throws Exception {
		return nodeWithToken(admin, ZookeeperLockProvider.DEFAULT_BASE_PATH, token, 3);
	}

	private static Optional<String> nodeWithToken(CuratorFramework admin, String path, long token, int depth)
			throws Exception {
		List<String> children;
		try {
			children = admin.getChildren().forPath(path);
		}
		catch (KeeperException.NoNodeException ex) {
			return Optional.empty();
		}
		for (String child : children) {
			String childPath = path + "/" + child;
			Stat stat = admin.checkExists().forPath(childPath);
			if (stat != null && stat.getCzxid() == token) {
				return Optional.of(childPath);
			}
			if (depth > 1) {
				Optional<String> found = nodeWithToken(admin, childPath, token, depth - 1);
				if (found.isPresent()) {
					return found;
				}
			}
		}
		return Optional.empty();
	}

}
