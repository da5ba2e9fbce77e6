package dev.distlock.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.FaultProxy;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * RedLock under the failures it is meant to survive, and those it is not, on 3 and 5 real
 * masters: a minority killed or paused changes nothing; a majority killed fails every
 * call clearly and never makes a second holder; a holder whose quorum is gone learns it
 * at its next renewal; tokens rise across holders even when the masters' counters
 * disagree; an acquire slower than its lease's validity does not count.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class RedLockFaultTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static String key() {
		return "redlock-" + UUID.randomUUID();
	}

	@ParameterizedTest(name = "{0} masters")
	@ValueSource(ints = { 3, 5 })
	void killingAMinorityKeepsTheLockWorking(int count) {
		try (RedLockMasters masters = RedLockMasters.start(count)) {
			RedLockProvider holder = masters.provider();
			RedLockProvider other = masters.provider();
			String key = key();
			LockHandle held = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))));
			// The acquire returned once a quorum answered; the others' replies follow.
			Conditions.await("every master holds the lock", Duration.ofSeconds(10),
					() -> masters.holdersOf(key) == count);
			for (int i = 0; i < masters.minority(); i++) {
				masters.kill(i);
			}
			assertThat(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, LEASE))))
				.as("the lock, held on the surviving majority")
				.isInstanceOf(LockAttempt.Busy.class);
			assertThat(held.renew(LEASE)).isTrue();
			assertThat(held.release()).isTrue();
			LockHandle next = acquired(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, LEASE))));
			assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
			assertThat(next.release()).isTrue();
			LockHandle fresh = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key(), LEASE))));
			assertThat(fresh.fencingToken()).isGreaterThan(next.fencingToken());
			assertThat(fresh.release()).isTrue();
		}
	}

	/**
	 * With a majority dead no call can reach a quorum: acquires, renewals and releases
	 * fail with {@link LockBackendException} naming the masters (after the store timeout,
	 * since Lettuce holds commands for a master while it reconnects), and the held lock
	 * is never granted to anyone else.
	 */
	@ParameterizedTest(name = "{0} masters")
	@ValueSource(ints = { 3, 5 })
	void killingAMajorityFailsClearlyAndNeverMakesASecondHolder(int count) {
		try (RedLockMasters masters = RedLockMasters.start(count)) {
			Duration storeTimeout = Duration.ofSeconds(1);
			RedLockProvider holder = masters.provider(storeTimeout);
			RedLockProvider other = masters.provider(storeTimeout);
			String key = key();
			LockHandle held = acquired(LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))));
			int majority = count / 2 + 1;
			for (int i = 0; i < majority; i++) {
				masters.kill(i);
			}
			String killed = ":" + masters.server(0).port();
			for (int attempt = 0; attempt < 2; attempt++) {
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> LockAttempt.join(other.tryLock(LockRequest.exclusive(key, LEASE))))
					.withMessageContaining("could not reach a quorum")
					.withMessageContaining(killed)
					.satisfies((ex) -> assertThat(ex.getCause()).isNotNull());
			}
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> LockAttempt.join(other.tryLock(LockRequest.exclusive(key(), LEASE))))
				.withMessageContaining("could not reach a quorum");
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> held.renew(LEASE))
				.withMessageContaining("renew");
			assertThatExceptionOfType(LockBackendException.class).isThrownBy(held::release)
				.withMessageContaining("release");
		}
	}

	/**
	 * A paused master (SIGSTOP) keeps its connections and answers nothing. A paused
	 * minority costs nothing while the others form a quorum; when the outcome depends on
	 * it, the call waits at most the store timeout. After the pause, the commands it
	 * missed leave no lock behind.
	 */
	@ParameterizedTest(name = "{0} masters")
	@ValueSource(ints = { 3, 5 })
	void aPausedMinorityIsBoundedByTheCallTimeout(int count) {
		try (RedLockMasters masters = RedLockMasters.start(count)) {
			RedLockProvider slow = masters.provider(Duration.ofSeconds(60));
			RedLockProvider bounded = masters.provider(Duration.ofSeconds(1));
			String key = key();
			String contested = key();
			int paused = masters.minority();
			for (int i = 0; i < paused; i++) {
				masters.server(i).pause();
			}
			try {
				// Far less than the 60 s store timeout: nobody waits for the paused
				// masters.
				assertTimeoutPreemptively(Duration.ofSeconds(20), () -> {
					LockHandle held = acquired(LockAttempt.join(slow.tryLock(LockRequest.exclusive(key, LEASE))));
					assertThat(held.renew(LEASE)).isTrue();
					assertThat(held.release()).isTrue();
				});
				// Another owner's lock on one live master: no quorum without the paused
				// ones.
				masters.server(paused)
					.command("HSET", RedLockMasters.PREFIX + contested, "owner", "someone", "fence", "1");
				masters.server(paused).command("PEXPIRE", RedLockMasters.PREFIX + contested, "60000");
				LockAttempt undecided = assertTimeoutPreemptively(Duration.ofSeconds(20),
						() -> LockAttempt.join(bounded.tryLock(LockRequest.exclusive(contested, LEASE))));
				assertThat(undecided).isInstanceOf(LockAttempt.Busy.class);
			}
			finally {
				for (int i = 0; i < paused; i++) {
					masters.server(i).resume();
				}
			}
			// Well within the 30 s lease: what is gone was released, not expired.
			Conditions.await("the paused masters ran their queued acquires and releases", Duration.ofSeconds(10),
					() -> !masters.anyMasterHas(key));
			masters.server(paused).command("DEL", RedLockMasters.PREFIX + contested);
			Conditions.await("the undecided attempt left nothing behind", Duration.ofSeconds(10),
					() -> !masters.anyMasterHas(contested));
		}
	}

	/**
	 * An acquire that a paused majority runs after the caller gave up is given back on
	 * each master, even where that master had the release script cached and not the
	 * acquire's (so the acquire came back {@code NOSCRIPT} and was sent again whole,
	 * behind the release sent when the caller gave up). The lease is a minute, so a lock
	 * left behind is still there when the test looks.
	 */
	@Test
	void anAcquireAPausedMajorityRunsLateIsGivenBack() {
		try (RedLockMasters masters = RedLockMasters.start(3)) {
			RedLockProvider provider = masters.provider();
			String key = key();
			int majority = masters.count() / 2 + 1;
			long[] evalsBefore = new long[majority];
			for (int i = 0; i < masters.count(); i++) {
				masters.server(i).command("SCRIPT", "FLUSH");
				masters.server(i).command("SCRIPT", "LOAD", RedLockScripts.RELEASE.getScriptAsString());
			}
			for (int i = 0; i < majority; i++) {
				evalsBefore[i] = LateAcquireUndoTests.evalCalls(masters.server(i));
				masters.server(i).pause();
			}
			try {
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(
							() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, Duration.ofMinutes(1)))))
					.withMessageContaining("could not reach a quorum");
			}
			finally {
				for (int i = 0; i < majority; i++) {
					masters.server(i).resume();
				}
			}
			for (int i = 0; i < majority; i++) {
				RedisServer server = masters.server(i);
				long before = evalsBefore[i];
				Conditions.await("the acquire sent again whole after NOSCRIPT has run", Duration.ofSeconds(10),
						() -> LateAcquireUndoTests.evalCalls(server) > before);
			}
			Conditions.await("the late acquires given back", Duration.ofSeconds(10), () -> !masters.anyMasterHas(key));
		}
	}

	/**
	 * The classic RedLock hazard: a majority restarts without its data, so another client
	 * takes the lock on it while the first still holds it on the minority. The first
	 * holder is told at its next renewal (a quorum says the lock is not its own):
	 * {@code isHeld()} turns false and its release throws. The new holder's token is
	 * larger, here through the masters' clock floor.
	 */
	@ParameterizedTest(name = "{0} masters")
	@ValueSource(ints = { 3, 5 })
	void aHolderWhoseQuorumIsLostLearnsItAtItsNextRenewal(int count) {
		try (RedLockMasters masters = RedLockMasters.start(count);
				RenewalScheduler scheduler = new RenewalScheduler()) {
			DefaultLockTemplate template = new DefaultLockTemplate(masters.provider(), scheduler,
					LockOptions.builder()
						.waitTime(Duration.ZERO)
						.leaseTime(Duration.ofSeconds(2))
						.autoRenew(true)
						.retryInterval(Duration.ofMillis(100))
						.build());
			RedLockProvider other = masters.provider();
			String key = key();
			Lease lease = template.acquire(key, LockOptions.defaults());
			// The acquire returned once a quorum answered. A master killed before it ran
			// the holder's acquire gets it again when the client reconnects, and would
			// hold the lock for the holder after its restart (as the next test shows).
			Conditions.await("every master holds the lock", Duration.ofSeconds(10),
					() -> masters.holdersOf(key) == count);
			int majority = count / 2 + 1;
			for (int i = 0; i < majority; i++) {
				masters.kill(i);
				masters.restart(i);
			}
			LockHandle usurper = awaitAcquired(other, key);
			Conditions.await("the first holder learns that its lease is lost", Duration.ofSeconds(20),
					() -> !lease.isHeld());
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release);
			assertThat(usurper.fencingToken()).isGreaterThan(lease.fencingToken());
			assertThat(usurper.release()).isTrue();
		}
	}

	/**
	 * A master dies after it read the holder's acquire but before it ran it, and comes
	 * back empty: the client sends the acquire again once it reconnects, so the restarted
	 * master holds the lock for the holder, which keeps its quorum. Nobody else gets the
	 * lock meanwhile, and the holder's renewal and release count that master.
	 */
	@Test
	void anAcquireSentAgainToARestartedMasterHoldsTheLockForItsHolderOnly() {
		try (RedLockMasters masters = RedLockMasters.start(3)) {
			RedLockProvider holder = masters.provider();
			RedLockProvider other = masters.provider();
			String key = key();
			LockHandle held = acquiredWhileAMasterReadsButDoesNotRun(masters, 0, holder, key);
			masters.kill(0);
			masters.kill(1);
			masters.restart(0);
			masters.restart(1);
			Conditions.await("the acquire sent again to the restarted master", Duration.ofSeconds(20),
					() -> masters.holdersOf(key) == 2);
			assertThat(LockAttempt.join(other.tryLock(LockRequest.exclusive(key, LEASE))))
				.as("the lock, held again on a quorum")
				.isInstanceOf(LockAttempt.Busy.class);
			assertThat(held.renew(LEASE)).isTrue();
			assertThat(held.release()).isTrue();
			LockHandle next = awaitAcquired(other, key);
			assertThat(next.release()).isTrue();
		}
	}

	/** Connections to {@code port} that this machine's clients have not closed. */
	private static long openConnectionsTo(int port) {
		return ss("state", "established", "state", "close-wait", "( dport = :" + port + " )").lines()
			.filter((line) -> !line.isBlank())
			.count();
	}

	private static String ss(String... filter) {
		List<String> command = new ArrayList<>(List.of("ss", "-Htn"));
		command.addAll(List.of(filter));
		try {
			Process ss = new ProcessBuilder(command).redirectErrorStream(true).start();
			String out = new String(ss.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			ss.waitFor();
			return out;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Bytes the server listening on {@code port} has read from its open connections: what
	 * they received less what waits unread.
	 */
	private static long bytesReadBy(int port) {
		long read = 0;
		for (String line : ss("-i", "state", "established", "( sport = :" + port + " )").split("\n")) {
			if (line.isBlank()) {
				continue;
			}
			if (!Character.isWhitespace(line.charAt(0))) {
				read -= Long.parseLong(line.trim().split("\\s+")[0]);
				continue;
			}
			for (String field : line.trim().split("\\s+")) {
				if (field.startsWith("bytes_received:")) {
					read += Long.parseLong(field.substring("bytes_received:".length()));
				}
			}
		}
		return read;
	}

	/**
	 * Each master's counter may be anywhere (one ran ahead, or its clock does); the token
	 * is written back to a quorum, so the next holder's token is larger even when it
	 * takes the lock on masters whose own counters were far behind.
	 */
	@Test
	void tokensRiseAcrossHoldersWhenTheMastersCountersDisagree() {
		try (RedLockMasters masters = RedLockMasters.start(3)) {
			RedLockProvider first = masters.provider();
			RedLockProvider second = masters.provider();
			String key = key();
			masters.server(0).command("SET", RedLockMasters.PREFIX, "4000000000000000");
			// The first holder's quorum is masters 0 and 1, the second's masters 1 and 2.
			masters.kill(2);
			LockHandle earlier = acquired(LockAttempt.join(first.tryLock(LockRequest.exclusive(key, LEASE))));
			assertThat(earlier.fencingToken()).isGreaterThan(4_000_000_000_000_000L);
			assertThat(earlier.release()).isTrue();
			masters.restart(2);
			masters.kill(0);
			LockHandle later = awaitAcquired(second, key);
			assertThat(later.fencingToken()).isGreaterThan(earlier.fencingToken());
			assertThat(later.release()).isTrue();
		}
	}

	/**
	 * A master reads the holder's acquire but dies before it runs it, and the holder
	 * releases the lock while that master is down: its client sends the acquire again
	 * once the master is back, and the release behind it. Fails if the release is dropped
	 * while the client reconnects and is not sent again after the acquire's late answer:
	 * the restarted master then holds the lock for its whole lease, and with one more
	 * master down nobody can take it.
	 */
	@Test
	void aLockReleasedWhileAMasterIsDownIsNotTakenAgainThereWhenItIsBack() {
		try (RedLockMasters masters = RedLockMasters.start(3)) {
			RedLockProvider provider = masters.provider();
			String key = key();
			LockHandle held = acquiredWhileAMasterReadsButDoesNotRun(masters, 2, provider, key);
			int port = masters.server(2).port();
			masters.kill(2);
			// The release goes out once the client knows the master is gone, while it
			// reconnects, not into the dead connection.
			Conditions.await("the client closes its connection to the killed master", Duration.ofSeconds(10),
					() -> openConnectionsTo(port) == 0);
			assertThat(held.release()).isTrue();
			// The outage itself, longer than the store timeout: the release's own
			// deadline passes while the client reconnects.
			LockSupport.parkNanos(RedisLockProvider.DEFAULT_STORE_TIMEOUT.plusSeconds(1).toNanos());
			masters.restart(2);
			awaitEverythingSentRan(masters, 2, provider);
			Conditions.await("no master holds the released lock", Duration.ofSeconds(10),
					() -> !masters.anyMasterHas(key));
		}
	}

	/**
	 * As {@link #aLockReleasedWhileAMasterIsDownIsNotTakenAgainThereWhenItIsBack}, on a
	 * master restarted with only the release script cached (another client released a
	 * lock there first): the acquire sent again comes back {@code NOSCRIPT} and is sent
	 * whole, behind the release, which finds nothing to delete. Fails unless the release
	 * is sent again once the acquire has answered: the master would hold the lock for its
	 * whole lease.
	 */
	@Test
	void aLockReleasedWhileAMasterIsDownIsDeletedThereAfterItsAcquireRanLate() throws Exception {
		try (RedLockMasters masters = RedLockMasters.start(3);
				FaultProxy proxy = FaultProxy.start(masters.server(2).host(), masters.server(2).port())) {
			List<String> uris = new ArrayList<>(masters.uris());
			uris.set(2, "redis://" + proxy.host() + ":" + proxy.port());
			RedLockProvider provider = masters.provider(uris, RedisLockProvider.DEFAULT_STORE_TIMEOUT);
			String key = key();
			LockHandle held = acquiredWhileAMasterReadsButDoesNotRun(masters, 2, provider, key);
			// Nothing answers behind the proxy until the master is back with the script.
			try (ServerSocket unused = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
				proxy.retarget(proxy.host(), unused.getLocalPort());
			}
			masters.kill(2);
			assertThat(held.release()).isTrue();
			masters.restart(2);
			masters.server(2).command("SCRIPT", "LOAD", RedLockScripts.RELEASE.getScriptAsString());
			proxy.retarget(masters.server(2).host(), masters.server(2).port());
			awaitEverythingSentRan(masters, 2, provider);
			Conditions.await("no master holds the released lock", Duration.ofSeconds(10),
					() -> !masters.anyMasterHas(key));
		}
	}

	/**
	 * The lock, taken on the other masters while master {@code index}, paused, has read
	 * the acquire without running it. Killed with the acquire still unread, the master
	 * would reset the connection, and the client would fail the acquire rather than send
	 * it again.
	 */
	private static LockHandle acquiredWhileAMasterReadsButDoesNotRun(RedLockMasters masters, int index,
			RedLockProvider provider, String key) {
		int port = masters.server(index).port();
		masters.server(index).command("CLIENT", "PAUSE", "60000", "ALL");
		long readBefore = bytesReadBy(port);
		LockHandle held = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE))));
		Conditions.await("the paused master reads the acquire", Duration.ofSeconds(10),
				() -> bytesReadBy(port) > readBefore);
		return held;
	}

	/**
	 * Waits until a lock the provider takes now is on master {@code index}: the commands
	 * to a master run in the order sent, so everything sent to it before has run there.
	 */
	private static void awaitEverythingSentRan(RedLockMasters masters, int index, RedLockProvider provider) {
		List<String> probes = new ArrayList<>();
		Conditions.await("a lock taken now reaches master " + index, Duration.ofSeconds(30), () -> {
			String probe = key();
			probes.add(probe);
			acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(probe, LEASE))));
			return probes.stream()
				.anyMatch(
						(taken) -> masters.server(index).command("EXISTS", RedLockMasters.PREFIX + taken).equals(":1"));
		});
	}

	/**
	 * Replies slower than the lease's validity: a quorum granted the lock, but too late
	 * for the holder to count on it, so it is not handed out (and it is released on every
	 * master).
	 */
	@Test
	void anAcquireSlowerThanItsLeasesValidityDoesNotCount() {
		List<FaultProxy> proxies = new ArrayList<>();
		try (RedLockMasters masters = RedLockMasters.start(3)) {
			List<String> uris = new ArrayList<>();
			for (int i = 0; i < masters.count(); i++) {
				FaultProxy proxy = FaultProxy.start(masters.server(i).host(), masters.server(i).port());
				proxies.add(proxy);
				uris.add("redis://" + proxy.host() + ":" + proxy.port());
			}
			RedLockProvider provider = masters.provider(uris, Duration.ofSeconds(10));
			// Counters that agree: every master gives the same token, so no write-back
			// round trip follows (whose owner check would also catch a lock that expired
			// meanwhile), and only the validity stands between the late quorum and a
			// lock that has already expired on the masters.
			for (int i = 0; i < masters.count(); i++) {
				masters.server(i).command("SET", RedLockMasters.PREFIX, "4000000000000000");
			}
			proxies.forEach((proxy) -> proxy.delayReplies(Duration.ofMillis(400)));
			String key = key();
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(
						() -> LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, Duration.ofMillis(300)))))
				.withMessageContaining("validity");
			proxies.forEach((proxy) -> proxy.delayReplies(Duration.ZERO));
			LockHandle handle = acquired(LockAttempt.join(provider.tryLock(LockRequest.exclusive(key(), LEASE))));
			assertThat(handle.release()).isTrue();
		}
		finally {
			proxies.forEach(FaultProxy::close);
		}
	}

	/**
	 * Asks for the lock as a waiter would, once per retry interval rather than in a tight
	 * loop: a restarted master answers once Lettuce has reconnected to it, within
	 * seconds. A failure names the last answer, so that a slow machine's failure says
	 * what the masters answered.
	 */
	private static LockHandle awaitAcquired(RedLockProvider provider, String key) {
		long start = System.nanoTime();
		long deadline = start + Duration.ofSeconds(30).toNanos();
		// Each distinct answer with when it first came, so that a failure tells how the
		// wait went, not only how it ended.
		Map<String, Long> answers = new LinkedHashMap<>();
		while (System.nanoTime() - deadline < 0) {
			Object answer;
			try {
				LockAttempt attempt = LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, LEASE)));
				if (attempt instanceof LockAttempt.Acquired acquired) {
					return acquired.handle();
				}
				answer = (attempt instanceof LockAttempt.Busy busy)
						? "busy, " + busy.remaining().toSeconds() + " s left" : attempt;
			}
			catch (LockBackendException ex) {
				answer = ex.getMessage();
			}
			answers.putIfAbsent(String.valueOf(answer), (System.nanoTime() - start) / 1_000_000);
			LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
		}
		return fail("lock '" + key + "' was not acquired within 30s; the answers, each with the millisecond it"
				+ " first came: " + answers + "; the masters: " + provider);
	}

	private static LockHandle acquired(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			return acquired.handle();
		}
		return fail("expected the lock to be acquired but was " + attempt);
	}

}
