package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.DistributedLatch.CountDown;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the JDBC semaphores and latches guarantee beyond the published contracts, on a
 * real database server with two providers over pools of their own (two JVMs): never more
 * permit holders than permits while takers of both race, a killed holder's permit back at
 * its lease, a participant counted once however many times, and from wherever, its
 * count-down is sent at once, and tokens and generations rising across the sweep.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Tag("server")
@Timeout(value = 2, unit = TimeUnit.MINUTES)
abstract class AbstractJdbcSemaphoreLatchTests {

	private static final Duration LONG_LEASE = Duration.ofSeconds(30);

	private JdbcPair pair;

	/** A pool with HikariCP's default settings on the server under test. */
	abstract HikariDataSource newDataSource();

	@BeforeAll
	void start() {
		this.pair = new JdbcPair(this::newDataSource);
	}

	@AfterAll
	void stop() {
		this.pair.close();
	}

	private static String key() {
		return "jdbc-family-" + UUID.randomUUID();
	}

	/**
	 * Eight takers, four on each provider, race for the two permits of one semaphore from
	 * one gate; each counts itself in while it holds a permit.
	 */
	@Test
	void neverMoreHoldersThanPermitsWhileTwoProvidersRace() throws Exception {
		String key = key();
		int permits = 2;
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger most = new AtomicInteger();
		AtomicInteger taken = new AtomicInteger();
		AtomicInteger busy = new AtomicInteger();
		List<String> lost = Collections.synchronizedList(new ArrayList<>());
		CountDownLatch gate = new CountDownLatch(1);
		List<CompletableFuture<Void>> takers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			LockProvider provider = (t % 2 == 0) ? this.pair.provider : this.pair.other;
			takers.add(CompletableFuture.runAsync(() -> {
				await(gate);
				for (int i = 0; i < 20; i++) {
					LockAttempt attempt = LockAttempt
						.join(provider.tryLock(LockRequest.permit(key, permits, LONG_LEASE)));
					if (!(attempt instanceof LockAttempt.Acquired acquired)) {
						busy.incrementAndGet();
						continue;
					}
					taken.incrementAndGet();
					most.accumulateAndGet(inside.incrementAndGet(), Math::max);
					// The holder's work: long enough that takers overlap it.
					LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
					inside.decrementAndGet();
					if (!acquired.handle().release()) {
						lost.add(acquired.handle().toString());
					}
				}
			}, TestThreads.EACH));
		}
		gate.countDown();
		CompletableFuture.allOf(takers.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
		assertThat(most.get()).as("holders at once (taken " + taken + ", busy " + busy + ")")
			.isLessThanOrEqualTo(permits);
		assertThat(taken.get()).as("permits taken").isPositive();
		assertThat(busy.get()).as("attempts that found every permit held").isPositive();
		assertThat(lost).as("permits lost before their release").isEmpty();
	}

	/**
	 * A holder that dies (its provider and pool closed, its permit neither renewed nor
	 * released) keeps its permit until its lease runs out on the database's clock, and
	 * not forever.
	 */
	@Test
	void aKilledHoldersPermitLapsesAtItsLease() {
		String key = key();
		Duration lease = Duration.ofSeconds(1);
		HikariDataSource pool = newDataSource();
		JdbcLockProvider doomed = new JdbcLockProvider(pool, JdbcPair.TABLE);
		LockHandle dead = acquired(LockAttempt.join(doomed.tryLock(LockRequest.permit(key, 1, lease))));
		long sent = System.nanoTime();
		doomed.close();
		pool.close();
		LockAttempt during = LockAttempt.join(this.pair.other.tryLock(LockRequest.permit(key, 1, LONG_LEASE)));
		if (System.nanoTime() - sent < LockHandle.validityNanos(lease)) {
			assertThat(during).as("the dead holder's permit within its lease").isInstanceOf(LockAttempt.Busy.class);
		}
		AtomicReference<LockHandle> taken = new AtomicReference<>();
		Conditions.await("the dead holder's permit to lapse", lease.plusSeconds(10),
				() -> LockAttempt
					.join(this.pair.other
						.tryLock(LockRequest.permit(key, 1, LONG_LEASE))) instanceof LockAttempt.Acquired acquired
						&& taken.compareAndSet(null, acquired.handle()));
		LockHandle next = taken.get();
		assertThat(next.fencingToken()).as("a later permit's token").isGreaterThan(dead.fencingToken());
		assertThat(next.release()).isTrue();
	}

	/**
	 * The same participant counts down one generation from eight threads on two providers
	 * at once: it is counted once.
	 */
	@Test
	void aCountDownSentManyTimesAtOnceCountsOnce() throws Exception {
		String key = key();
		LatchStore here = this.pair.provider.latches().orElseThrow();
		LatchStore there = this.pair.other.latches().orElseThrow();
		long generation = here.join(key, 2, Duration.ofMinutes(1)).generation();
		CountDownLatch gate = new CountDownLatch(1);
		ConcurrentHashMap<CountDown, AtomicInteger> outcomes = new ConcurrentHashMap<>();
		List<CompletableFuture<Void>> senders = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			LatchStore latches = (t % 2 == 0) ? here : there;
			senders.add(CompletableFuture.runAsync(() -> {
				await(gate);
				CountDown outcome = latches.countDown(key, generation, "worker-1", Duration.ofMinutes(1));
				outcomes.computeIfAbsent(outcome, (o) -> new AtomicInteger()).incrementAndGet();
			}, TestThreads.EACH));
		}
		gate.countDown();
		CompletableFuture.allOf(senders.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
		assertThat(outcomes.get(CountDown.COUNTED)).as("outcomes " + outcomes).hasValue(1);
		assertThat(outcomes.get(CountDown.ALREADY_COUNTED)).as("outcomes " + outcomes).hasValue(7);
		assertThat(there.state(key).remaining()).as("participants still missing").isEqualTo(1);
		assertThat(here.countDown(key, generation, "worker-2", Duration.ofMinutes(1))).isEqualTo(CountDown.COUNTED);
		assertThat(there.state(key).remaining()).as("opened by the second participant").isZero();
	}

	/**
	 * The sweep deletes lapsed permits, idle semaphores and expired latches, and what is
	 * taken again afterwards still numbers above what was issued before.
	 */
	@Test
	void theSweepDeletesLapsedRowsAndTokensStillRise() {
		String key = key();
		Duration brief = Duration.ofMillis(200);
		LockHandle lapsed = acquired(LockAttempt.join(this.pair.provider.tryLock(LockRequest.permit(key, 1, brief))));
		LatchStore latches = this.pair.provider.latches().orElseThrow();
		long generation = latches.join(key, 2, brief).generation();
		// The latch was armed after the permit was taken, with the same lease: gone, it
		// tells that the permit's lease ran out too, on the database's clock.
		Conditions.await("the permit and the latch to lapse", Duration.ofSeconds(10), () -> latches.state(key) == null);
		assertThat(this.pair.provider.sweepFamily(Duration.ofNanos(1000))).as("rows swept").isGreaterThanOrEqualTo(3);
		LockHandle next = acquired(LockAttempt.join(this.pair.other.tryLock(LockRequest.permit(key, 1, LONG_LEASE))));
		assertThat(next.fencingToken()).as("a token after the sweep").isGreaterThan(lapsed.fencingToken());
		assertThat(latches.join(key, 2, Duration.ofMinutes(1)).generation()).as("a generation after the sweep")
			.isGreaterThan(generation);
		assertThat(next.release()).isTrue();
	}

	private static void await(CountDownLatch gate) {
		try {
			if (!gate.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("The gate never opened");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
