package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisCluster;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A multi-key acquire that fails part-way leaves none of its keys in Redis, looked up
 * directly on the node that owns each key (not through the provider): a busy key in a
 * later cluster slot, a busy key later in one slot, the later slot's node hung until the
 * store timeout, the caller interrupted while the later slot's script is pending, and the
 * later slot's node killed (its connections reset) and restarted while the script is
 * pending; and the hung node costs the acquire one store timeout. Each test's lease is a
 * minute, so a key left behind is still there when the test looks, within 10 s. A fresh
 * three-master cluster per test, and no lock taken before (but in the interrupt and the
 * duration tests, see there): the provider's first release on a cluster (here the
 * clean-up) also starts the lookup of the masters' versions, which must not hold it past
 * the store timeout.
 */
@Timeout(value = 2, unit = java.util.concurrent.TimeUnit.MINUTES)
@Tag("server")
class RedisMultiLockCleanupTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	private RedisClusterPair pair;

	private RedisCluster cluster;

	private RedisLockProvider provider;

	private RedisLockProvider otherProvider;

	@BeforeEach
	void startCluster() {
		this.pair = new RedisClusterPair();
		this.cluster = this.pair.cluster;
		this.provider = this.pair.provider;
		this.otherProvider = this.pair.otherProvider;
	}

	@AfterEach
	void stopCluster() {
		this.cluster.nodes().stream().filter(RedisServer::isAlive).forEach(RedisServer::resume);
		this.pair.close();
	}

	@Test
	void aBusyKeyInALaterSlotLeavesNoEarlierKey() {
		List<String> keys = keysOnTwoNodes();
		LockAttempt held = LockAttempt.join(this.otherProvider.tryLock(LockRequest.exclusive(keys.get(1), LEASE)));
		assertThat(held).isInstanceOf(LockAttempt.Acquired.class);
		LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(sorted(keys), LEASE)));
		assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
		assertThat(presentNow(keys.subList(0, 1))).as("the earlier slot's key, right after the busy reply").isEmpty();
		((LockAttempt.Acquired) held).handle().release();
		assertNoneLeft(keys);
	}

	@Test
	void aBusyKeyLaterInOneSlotLeavesNoEarlierKey() {
		String id = UUID.randomUUID().toString();
		List<String> keys = List.of("clean-a-{" + id + "}", "clean-b-{" + id + "}", "clean-c-{" + id + "}");
		LockAttempt held = LockAttempt.join(this.otherProvider.tryLock(LockRequest.exclusive(keys.get(2), LEASE)));
		assertThat(held).isInstanceOf(LockAttempt.Acquired.class);
		LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(keys, LEASE).withWaiting(true)));
		assertThat(attempt).isInstanceOf(LockAttempt.Busy.class);
		assertThat(presentNow(keys.subList(0, 2))).as("the keys before the busy one, right after the busy reply")
			.isEmpty();
		((LockAttempt.Acquired) held).handle().release();
		assertNoneLeft(keys);
	}

	@Test
	void theLaterSlotsNodeHungPastTheStoreTimeoutLeavesNoKey() {
		List<String> keys = keysOnTwoNodes();
		RedisServer late = owner(keys.get(1));
		late.pause();
		assertThatExceptionOfType(RuntimeException.class)
			.isThrownBy(() -> LockAttempt.join(this.provider.tryLock(LockRequest.all(sorted(keys), LEASE))));
		// Given back within the attempt's deadline if there is time left, else just after
		// the failure: the hung slot's acquire used up the deadline. Still paused, the
		// later node cannot have run anything, and a minute's lease cannot have run out.
		Conditions.await("the earlier slot's key given back", Duration.ofSeconds(10),
				() -> presentNow(keys.subList(0, 1)).isEmpty());
		// The hung node then runs what was sent to it: the acquire, then the give-back.
		late.resume();
		assertNoneLeftOnceTheLateAcquireRan(keys);
	}

	/**
	 * One deadline for the whole attempt: with the later slot's node hung, a multi-key
	 * acquire through the template, with the client's default settings, ends within its
	 * wait time plus one store timeout, not one per slot plus one for giving back the
	 * hung slot's keys. Once the node resumes, no key is left.
	 */
	@Test
	void aHungLaterSlotCostsTheAcquireOneStoreTimeout() {
		List<String> keys = keysOnTwoNodes();
		RedisServer late = owner(keys.get(1));
		// Connections to both nodes up and scripts loaded first, so that the duration
		// measured is the attempt's, not the client's start-up.
		lockAndReleaseAll(keyOn(owner(keys.get(0))));
		lockAndReleaseAll(keyOn(late));
		Duration waitTime = Duration.ofMillis(500);
		Duration storeTimeout = this.provider.callTimeout();
		try (RenewalScheduler scheduler = new RenewalScheduler()) {
			DefaultLockTemplate template = new DefaultLockTemplate(this.provider, scheduler,
					LockOptions.builder()
						.waitTime(waitTime)
						.leaseTime(LEASE)
						.autoRenew(true)
						.retryInterval(Duration.ofMillis(100))
						.build());
			late.pause();
			long start = System.nanoTime();
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> template.tryAcquireAll(keys, LockOptions.defaults()));
			Duration took = Duration.ofNanos(System.nanoTime() - start);
			// A second of slack for a loaded machine's scheduling, well under the second
			// store timeout that the bound rules out.
			assertThat(took).as("the acquire's duration").isLessThan(waitTime.plus(storeTimeout).plusSeconds(1));
		}
		late.resume();
		assertNoneLeftOnceTheLateAcquireRan(keys);
	}

	/**
	 * The acquire does not wait for Redis: with the later slot's node hung, the answer is
	 * pending when {@code tryLock} returns, the earlier slot is taken meanwhile, and the
	 * answer fails at the store timeout with the store-timeout message; no key is left.
	 * The later node has the give-back's script cached but not the acquire's, so the
	 * acquire runs behind the give-back sent at the deadline, and only the one sent after
	 * its late reply gives its key back.
	 */
	@Test
	void theAnswerIsPendingWhileTheLaterSlotsNodeIsHung() {
		List<String> keys = keysOnTwoNodes();
		RedisServer late = owner(keys.get(1));
		lockAndReleaseAll(keyOn(late));
		late.command("SCRIPT", "FLUSH");
		late.command("SCRIPT", "LOAD", FamilyScripts.RELEASE_ALL.getScriptAsString());
		late.pause();
		CompletableFuture<LockAttempt> answer = this.provider.tryLock(LockRequest.all(sorted(keys), LEASE))
			.toCompletableFuture();
		assertThat(answer).as("the answer when tryLock returns, the later node frozen").isNotDone();
		Conditions.await("the earlier slot taken", Duration.ofSeconds(10),
				() -> answer.isDone() || !presentNow(keys.subList(0, 1)).isEmpty());
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> LockAttempt.join(answer))
			.withMessage("Redis did not answer within " + this.provider.callTimeout().toMillis()
					+ "ms (distributed-lock.store-timeout) to acquire lock '" + String.join(",", sorted(keys)) + "'");
		Conditions.await("the earlier slot's key given back", Duration.ofSeconds(10),
				() -> presentNow(keys.subList(0, 1)).isEmpty());
		late.resume();
		assertNoneLeftOnceTheLateAcquireRan(keys);
	}

	@Test
	void anInterruptWhileTheLaterSlotsScriptIsPendingLeavesNoKey() throws Exception {
		List<String> keys = keysOnTwoNodes();
		RedisServer late = owner(keys.get(1));
		// The interrupt may come before or after the later slot's acquire is sent. With
		// the provider's connection to the later node up and its scripts loaded there
		// before the pause, what the caller sends that node runs in the order sent, and
		// a call on the same connection after the resume answers only once all of it
		// (the acquire, if it was sent, and the give-back behind it) has run.
		lockAndReleaseAll(keyOn(late));
		late.pause();
		AtomicReference<Object> outcome = new AtomicReference<>();
		Thread caller = startCaller(keys, outcome);
		Conditions.await("the earlier slot taken", Duration.ofSeconds(10),
				() -> !presentNow(keys.subList(0, 1)).isEmpty());
		caller.interrupt();
		caller.join(Duration.ofSeconds(30).toMillis());
		assertThat(caller.isAlive()).isFalse();
		assertThat(outcome.get()).as("the interrupted call's outcome").isInstanceOf(RuntimeException.class);
		late.resume();
		lockAndReleaseAll(keyOn(late));
		assertNoneLeft(keys);
	}

	@Test
	void aConnectionResetWhileTheLaterSlotsScriptIsPendingLeavesNoKey() throws Exception {
		List<String> keys = keysOnTwoNodes();
		int lateIndex = this.cluster.nodes().indexOf(owner(keys.get(1)));
		RedisServer late = this.cluster.nodes().get(lateIndex);
		late.pause();
		AtomicReference<Object> outcome = new AtomicReference<>();
		Thread caller = startCaller(keys, outcome);
		Conditions.await("the earlier slot taken", Duration.ofSeconds(10),
				() -> !presentNow(keys.subList(0, 1)).isEmpty());
		// kill -9: the node's connections are reset; it comes back with its slots (and
		// the client re-sends what it had in flight).
		late.kill();
		RedisServer restarted = late.restart();
		this.cluster.nodes().set(lateIndex, restarted);
		caller.join(Duration.ofSeconds(30).toMillis());
		assertThat(caller.isAlive()).isFalse();
		assertThat(outcome.get()).as("the call's outcome").isInstanceOf(RuntimeException.class);
		assertNoneLeft(keys);
	}

	/**
	 * A thread calling {@code tryLockAll(keys)}, its reply or exception in
	 * {@code outcome}.
	 */
	private Thread startCaller(List<String> keys, AtomicReference<Object> outcome) {
		Thread caller = new Thread(() -> {
			try {
				outcome.set(LockAttempt.join(this.provider.tryLock(LockRequest.all(sorted(keys), LEASE))));
			}
			catch (RuntimeException ex) {
				outcome.set(ex);
			}
		});
		caller.start();
		return caller;
	}

	/** A key of a slot that {@code node} serves. */
	private String keyOn(RedisServer node) {
		while (true) {
			String key = "other-" + UUID.randomUUID();
			if (owner(key) == node) {
				return key;
			}
		}
	}

	/** A multi-key acquire and release of {@code key} through the provider under test. */
	private void lockAndReleaseAll(String key) {
		LockAttempt attempt = LockAttempt.join(this.provider.tryLock(LockRequest.all(List.of(key), LEASE)));
		assertThat(attempt).isInstanceOf(LockAttempt.AcquiredAll.class);
		assertThat(this.provider.releaseAll(((LockAttempt.AcquiredAll) attempt).handles())).containsOnly(true);
	}

	/**
	 * Two keys whose slots lie on different nodes, the earlier slot first (the order in
	 * which the provider takes them, whatever their names' order).
	 */
	private List<String> keysOnTwoNodes() {
		while (true) {
			String early = "clean-" + UUID.randomUUID();
			String late = "clean-" + UUID.randomUUID();
			if (slot(early) < slot(late) && owner(early) != owner(late)) {
				return List.of(early, late);
			}
		}
	}

	private static List<String> sorted(List<String> keys) {
		return keys.stream().sorted().toList();
	}

	private static int slot(String key) {
		return RedisKeys.slotOf(TestRedis.PREFIX + key);
	}

	/**
	 * The node serving {@code key}'s slot, as {@link RedisCluster} assigned the slots.
	 */
	private RedisServer owner(String key) {
		List<RedisServer> nodes = this.cluster.nodes();
		int index = nodes.size() - 1;
		while (index > 0 && slot(key) < index * 16384 / nodes.size()) {
			index--;
		}
		return nodes.get(index);
	}

	/** The keys whose lock key exists now, asked of their node directly. */
	private List<String> presentNow(List<String> keys) {
		return keys.stream()
			.filter((key) -> ":1".equals(owner(key).command("EXISTS", TestRedis.PREFIX + key)))
			.toList();
	}

	/**
	 * {@link #assertNoneLeft}, looked at only once the acquire that the later slot's node
	 * got while it was paused has run there. That node runs it only after it resumes and,
	 * being fresh, after a {@code NOSCRIPT} reply, so possibly after a give-back sent
	 * later; before it ran, its key is absent and the look would pass too early. The
	 * acquire writes the slot's fencing counter, which nothing else of the test writes.
	 */
	private void assertNoneLeftOnceTheLateAcquireRan(List<String> keys) {
		String late = keys.get(1);
		String counter = new RedisKeys(TestRedis.PREFIX, true).fenceKey(TestRedis.PREFIX + late);
		Conditions.await("the later slot's acquire run on its node", Duration.ofSeconds(10),
				() -> ":1".equals(owner(late).command("EXISTS", counter)));
		assertNoneLeft(keys);
	}

	/**
	 * None of {@code keys} in Redis within 10 s (their lease is a minute): what a hung
	 * node ran late has been given back too.
	 */
	private void assertNoneLeft(List<String> keys) {
		Conditions.await("no key of the failed call left in Redis", Duration.ofSeconds(10),
				() -> presentNow(keys).isEmpty());
		assertThat(presentNow(keys)).as("keys left: " + keys.stream().collect(Collectors.joining(","))).isEmpty();
	}

}
