package dev.distlock.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.spi.LocalHandover;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Local hand-over ({@link LocalHandover}) on a real store, for any store that offers it:
 * two templates over providers of their own stand for two JVMs, with hand-over on. Tokens
 * rise across local passes and JVMs, a lock passed locally costs no store call, a waiter
 * of the other JVM gets the lock while eight threads of this one hammer it, and a lock
 * the store lost while it is passed on is reported to its holder and never handed to a
 * request made after another JVM took it. A store's test extends this class, gives a
 * template per JVM, counts its store calls and takes a lock away from outside.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class AbstractLocalHandoverTests {

	/**
	 * The defaults of each JVM's template: a 30 s lease, renewed; retries every 100 ms.
	 */
	protected static final LockOptions OPTIONS = LockOptions.builder()
		.waitTime(Duration.ofSeconds(10))
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(100))
		.build();

	private final ExecutorService threads = Executors.newCachedThreadPool();

	/**
	 * A template standing for one JVM: a provider of its own, {@link #OPTIONS} and local
	 * hand-over with {@code handover}; the subclass closes it after the test.
	 */
	protected abstract DefaultLockTemplate newJvm(HandoverSettings handover);

	/** A template standing for one JVM, with the default hand-over settings. */
	protected DefaultLockTemplate newJvm() {
		return newJvm(HandoverSettings.ON);
	}

	/**
	 * Takes the lock on {@code key} away from its holder from outside the library, as a
	 * failover that lost the holder's last write, a restore or an operator would: the
	 * store then lets any other owner take it, with a token above every token it handed
	 * out for the key.
	 */
	protected abstract void loseLock(String key);

	/**
	 * The store calls every provider of the test made so far (commands, scripts,
	 * statements), as the store's own statistics count them.
	 */
	protected abstract long storeCalls();

	/** What {@link #storeCalls()} counts, for the messages. */
	protected abstract String storeCallName();

	@AfterEach
	void stopThreads() {
		this.threads.shutdownNow();
	}

	/**
	 * Thread A of one JVM holds the lock with a block of tokens and thread B waits for it
	 * in the JVM; the store loses the lock and another JVM takes it; thread C asks after
	 * that. A's release, which would hand the lock to B, is told of the loss
	 * ({@link LeaseLostException}), and neither B nor C gets a token of the old block,
	 * which would be below the other JVM's while it holds the lock: both wait for it and
	 * get greater tokens. (A {@code max-time} of a minute: B lines up after A took the
	 * lock, which may take longer than the default 20 ms.)
	 */
	@Test
	void aLockLostInTheStoreIsNeverHandedToARequestMadeAfterAnotherJvmTookIt() throws Exception {
		String key = key();
		DefaultLockTemplate jvm = newJvm(new HandoverSettings(true, 32, Duration.ofMinutes(1)));
		DefaultLockTemplate other = newJvm();
		Lease a = jvm.acquire(key, LockOptions.defaults());
		Future<Long> b = tokenOfAWaitingThread(jvm, key);
		loseLock(key);
		Lease taken = other.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build());
		assertThat(taken.fencingToken()).isGreaterThan(a.fencingToken());
		Future<Long> c = tokenOfAWaitingThread(jvm, key);
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(a::release);
		assertThat(b).as("B while the other JVM holds the lock").isNotDone();
		assertThat(c).as("C while the other JVM holds the lock").isNotDone();
		taken.release();
		assertThat(b.get(20, TimeUnit.SECONDS)).as("B's token").isGreaterThan(taken.fencingToken());
		assertThat(c.get(20, TimeUnit.SECONDS)).as("C's token").isGreaterThan(taken.fencingToken());
	}

	/**
	 * A thread of {@code jvm} that asks for {@code key}, returned once it waits (in the
	 * JVM's line or at the store); it releases the lock as soon as it has it, and answers
	 * its token.
	 */
	private Future<Long> tokenOfAWaitingThread(DefaultLockTemplate jvm, String key) {
		AtomicReference<Thread> thread = new AtomicReference<>();
		Future<Long> token = this.threads.submit(() -> {
			thread.set(Thread.currentThread());
			try (Lease lease = jvm.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(30)).build())) {
				return lease.fencingToken();
			}
		});
		Conditions.await("a waiting thread", Duration.ofSeconds(10),
				() -> thread.get() != null && (thread.get().getState() == Thread.State.WAITING
						|| thread.get().getState() == Thread.State.TIMED_WAITING));
		return token;
	}

	protected static String key() {
		return "handover-" + UUID.randomUUID();
	}

	/**
	 * Two JVMs of four threads each on one key: mutual exclusion, tokens that rise in the
	 * order the lock was held, both JVMs handing over locally, and fewer store calls than
	 * two per acquisition (an acquire and a release each, without hand-over).
	 */
	@Test
	void tokensRiseAcrossLocalHandOversAndJvms() throws Exception {
		String key = key();
		List<DefaultLockTemplate> jvms = List.of(newJvm(), newJvm());
		jvms.get(0).run(key, () -> {
		});
		long callsBefore = storeCalls();
		List<Long> tokens = new ArrayList<>();
		AtomicInteger inside = new AtomicInteger();
		AtomicBoolean overlap = new AtomicBoolean();
		List<Future<?>> workers = new ArrayList<>();
		int perThread = 100;
		for (DefaultLockTemplate jvm : jvms) {
			for (int t = 0; t < 4; t++) {
				workers.add(this.threads.submit(() -> {
					for (int i = 0; i < perThread; i++) {
						jvm.run(key, () -> {
							if (inside.incrementAndGet() != 1) {
								overlap.set(true);
							}
							tokens.add(LockContext.current().orElseThrow().fencingToken());
							inside.decrementAndGet();
						});
					}
				}));
			}
		}
		for (Future<?> worker : workers) {
			worker.get(100, TimeUnit.SECONDS);
		}
		int acquisitions = 8 * perThread;
		long calls = storeCalls() - callsBefore;
		long handovers = jvms.get(0).localHandovers() + jvms.get(1).localHandovers();
		System.out.println(getClass().getSimpleName() + ": " + acquisitions + " acquisitions, " + handovers
				+ " local hand-overs, " + calls + " " + storeCallName());
		assertThat(overlap).isFalse();
		assertThat(tokens).hasSize(acquisitions).isSorted().doesNotHaveDuplicates();
		assertThat(jvms.get(0).localHandovers()).isPositive();
		assertThat(jvms.get(1).localHandovers()).isPositive();
		assertThat(calls).as("%s for %d acquisitions", storeCallName(), acquisitions).isLessThan(2L * acquisitions);
	}

	/**
	 * A waiter of another JVM gets the lock while eight threads of this one hammer it,
	 * five times over: the JVM gives the lock back to the store after at most 32 passes
	 * or 20 ms, and its own waiters stand back after a release the other JVM's waiter had
	 * marked.
	 */
	@Test
	void aRemoteWaiterGetsTheLockWhileEightLocalThreadsHammerIt() throws Exception {
		String key = key();
		DefaultLockTemplate hammered = newJvm();
		DefaultLockTemplate remote = newJvm();
		AtomicBoolean stop = new AtomicBoolean();
		List<Future<?>> workers = new ArrayList<>();
		for (int t = 0; t < 8; t++) {
			workers.add(this.threads.submit(() -> {
				while (!stop.get()) {
					hammered.run(key, () -> {
					});
				}
			}));
		}
		Conditions.await("hand-overs under way", Duration.ofSeconds(30), () -> hammered.localHandovers() > 500);
		List<Long> waitedMillis = new ArrayList<>();
		for (int round = 0; round < 5; round++) {
			long start = System.nanoTime();
			try (Lease lease = remote.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(5)).build())) {
				assertThat(lease.isHeld()).isTrue();
				waitedMillis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
			}
		}
		stop.set(true);
		for (Future<?> worker : workers) {
			worker.get(30, TimeUnit.SECONDS);
		}
		System.out.println(getClass().getSimpleName() + ": the remote waiter waited " + waitedMillis + " ms against "
				+ hammered.localHandovers() + " local hand-overs");
	}

}
