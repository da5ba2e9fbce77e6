package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bound of every call after a local hand-over, on a store that answers slowly but
 * within its call timeout: a release, and an acquire that takes a lock over, never wait
 * for an owner check on the wire and then a whole store timeout more for a check of their
 * own. Each template stands for one JVM.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("slow")
class HandoverCallBoundTests {

	/** Hand-over bounds no run in these tests reaches, whatever the machine's speed. */
	private static final HandoverSettings PATIENT = new HandoverSettings(true, 32, Duration.ofMinutes(1));

	/** Room for thread hand-offs on a busy machine; far below a second store call. */
	private static final Duration SLACK = Duration.ofMillis(400);

	@AutoClose
	private final Closing closing = new Closing();

	private DefaultLockTemplate template(FaultyStore store) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(30))
					.leaseTime(Duration.ofMinutes(1))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build(),
				LeaseLossListener.NONE, false, LockObserver.NONE, PATIENT);
		this.closing.add(template);
		return template;
	}

	private static String key() {
		return "bound-" + UUID.randomUUID();
	}

	/**
	 * Three threads of one JVM wait for a key another JVM holds; each releases as soon as
	 * it gets the lock, so the first hands it to the second and the second to the third,
	 * while the first's owner check is still on the wire. Releases, renewals and owner
	 * checks take 0.9 s of a 1 s store timeout. Every release ends within one store
	 * timeout: the second does not wait out the first's check and then send its own, and
	 * the third's release does not wait behind both.
	 */
	@Test
	void everyReleaseAfterAHandOverEndsWithinOneStoreTimeout() throws Exception {
		FaultyStore store = new FaultyStore(Duration.ofSeconds(1));
		store.latency = Duration.ofMillis(900);
		DefaultLockTemplate jvm = template(store);
		DefaultLockTemplate other = template(store);
		String key = key();
		Lease held = other.acquire(key, LockOptions.defaults());
		List<Waiter<Released>> threads = new ArrayList<>();
		for (String name : new String[] { "x", "y", "z" }) {
			threads.add(Waiter.start(name, () -> Released.timed(jvm.acquire(key, LockOptions.defaults()))));
		}
		// All three asked before the JVM's store acquisition, so none needs a check to
		// take the lock over.
		Await.until("three threads in the JVM's line", Duration.ofSeconds(10),
				() -> jvm.waitingThreads().getOrDefault(key, 0) == 3);
		held.release();
		List<Released> released = new ArrayList<>();
		for (Waiter<Released> thread : threads) {
			released.add(thread.result.get(20, TimeUnit.SECONDS));
		}
		released.sort(Comparator.comparingLong(Released::token));
		assertThat(jvm.localHandovers()).as("local hand-overs").isEqualTo(2);
		assertThat(released)
			.allSatisfy((release) -> assertThat(release.took()).as("release of token " + release.token())
				.isLessThanOrEqualTo(store.callTimeout().plus(SLACK)));
		// The first and last releases make one store call each. The middle one is
		// answered by the last one's release, unless that came too late for it, when it
		// fails as any call the store did not answer in time.
		assertThat(released.get(0).failure()).isNull();
		assertThat(released.get(2).failure()).isNull();
		assertThat(released.get(1).failure()).satisfiesAnyOf((failure) -> assertThat(failure).isNull(),
				(failure) -> assertThat(failure).isInstanceOf(LockBackendException.class));
		assertThat(other.tryAcquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build()))
			.as("the lock, free again")
			.isPresent();
	}

	/**
	 * A thread asks while the JVM passes the lock on, and an owner check sent before it
	 * asked is still on the wire; the lock is then left for it. Its acquire, with a wait
	 * time of 200 ms, ends within that and one store timeout, although the check it may
	 * take the lock over after needs two store calls in a row (the check on the wire,
	 * then one sent after it asked). So does the release of the holder that handed the
	 * lock to it.
	 */
	@Test
	void aTakeOverEndsWithinTheWaitTimeAndOneStoreTimeout() throws Exception {
		FaultyStore store = new FaultyStore(Duration.ofSeconds(2));
		store.latency = Duration.ofMillis(1800);
		DefaultLockTemplate jvm = template(store);
		DefaultLockTemplate other = template(store);
		String key = key();
		Lease held = other.acquire(key, LockOptions.defaults());
		CountDownLatch secondMayRelease = new CountDownLatch(1);
		Waiter<Released> first = Waiter.start("first", () -> Released.timed(jvm.acquire(key, LockOptions.defaults())));
		Await.until("the first thread in the JVM's line", Duration.ofSeconds(10),
				() -> jvm.waitingThreads().getOrDefault(key, 0) == 1);
		Waiter<Released> second = Waiter.start("second", () -> {
			Lease lease = jvm.acquire(key, LockOptions.defaults());
			secondMayRelease.await();
			return Released.timed(lease);
		});
		Await.until("the second thread in the JVM's line", Duration.ofSeconds(10),
				() -> jvm.waitingThreads().getOrDefault(key, 0) == 2);
		held.release();
		// The first thread takes the lock from the store and hands it to the second at
		// once; its owner check is on the wire for 1.8 s from then.
		Await.until("the second thread holds the lock", Duration.ofSeconds(10), () -> jvm.localHandovers() == 1);
		Duration wait = Duration.ofMillis(200);
		long asked = System.nanoTime();
		Waiter<Lease> third = Waiter.start("third",
				() -> jvm.acquire(key, LockOptions.builder().waitTime(wait).build()));
		Await.parked(third.thread);
		secondMayRelease.countDown();
		Throwable outcome = outcome(third);
		Duration took = Duration.ofNanos(System.nanoTime() - asked);
		assertThat(first.result.get(10, TimeUnit.SECONDS).endedNanos() - asked)
			.as("the first thread's check was on the wire when the third thread asked")
			.isPositive();
		assertThat(took).as("the third thread's acquire")
			.isLessThanOrEqualTo(wait.plus(store.callTimeout()).plus(SLACK));
		assertThat(outcome).as("the third thread's acquire").isInstanceOf(LockBackendException.class);
		Released handedOn = second.result.get(10, TimeUnit.SECONDS);
		assertThat(handedOn.took()).as("the second thread's release")
			.isLessThanOrEqualTo(store.callTimeout().plus(SLACK));
	}

	/**
	 * The release that ends a run of hand-overs goes to the store at once, even with an
	 * owner check on the wire, and that check, reaching the store after the release (it
	 * takes a second to get there), finds the lock gone: the run released it, so that is
	 * no loss. The holder that handed the lock on is answered by the release, and nobody
	 * is told of a loss.
	 */
	@Test
	void aCheckThatRunsAfterTheRunsOwnReleaseIsNoLoss() throws Exception {
		FaultyStore store = new FaultyStore(Duration.ofSeconds(2));
		store.checkLatency = Duration.ofSeconds(1);
		DefaultLockTemplate jvm = template(store);
		DefaultLockTemplate other = template(store);
		String key = key();
		Lease held = other.acquire(key, LockOptions.defaults());
		Waiter<Released> first = Waiter.start("first", () -> Released.timed(jvm.acquire(key, LockOptions.defaults())));
		Await.until("the first thread in the JVM's line", Duration.ofSeconds(10),
				() -> jvm.waitingThreads().getOrDefault(key, 0) == 1);
		CountDownLatch checkSent = new CountDownLatch(1);
		Waiter<Released> second = Waiter.start("second", () -> {
			Lease lease = jvm.acquire(key, LockOptions.defaults());
			checkSent.await();
			return Released.timed(lease);
		});
		Await.until("the second thread in the JVM's line", Duration.ofSeconds(10),
				() -> jvm.waitingThreads().getOrDefault(key, 0) == 2);
		held.release();
		Await.until("the first thread's owner check on the wire", Duration.ofSeconds(10),
				() -> store.checks.get() == 1);
		checkSent.countDown();
		Released ending = second.result.get(10, TimeUnit.SECONDS);
		Released handedOn = first.result.get(10, TimeUnit.SECONDS);
		assertThat(jvm.localHandovers()).isOne();
		assertThat(ending.failure()).as("the release that ended the run").isNull();
		assertThat(ending.took()).as("the release that ended the run, not waiting for the check")
			.isLessThan(store.checkLatency.dividedBy(2));
		assertThat(handedOn.failure()).as("the release of the thread that handed the lock on").isNull();
	}

	/**
	 * What the third thread's acquire ended with: its failure, or null if it got the
	 * lock.
	 */
	private static @Nullable Throwable outcome(Waiter<Lease> waiter) throws Exception {
		try {
			waiter.result.get(20, TimeUnit.SECONDS).release();
			return null;
		}
		catch (java.util.concurrent.ExecutionException ex) {
			return ex.getCause();
		}
	}

	/**
	 * How a holder's release went: its token, how long it took, when it ended, its
	 * failure if any.
	 */
	record Released(long token, Duration took, long endedNanos, @Nullable RuntimeException failure) {

		static Released timed(Lease lease) {
			long token = lease.fencingToken();
			long start = System.nanoTime();
			RuntimeException failure = null;
			try {
				lease.release();
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
			long ended = System.nanoTime();
			return new Released(token, Duration.ofNanos(ended - start), ended, failure);
		}

	}

}
