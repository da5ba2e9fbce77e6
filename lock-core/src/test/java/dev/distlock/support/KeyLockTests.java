package dev.distlock.support;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.KeyLock;
import dev.distlock.LeaseLostException;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.inmemory.InMemoryLockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link KeyLock}, the {@code java.util.concurrent.locks.Lock} view of a key, on the
 * in-memory store; two templates on one store stand for two JVMs.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KeyLockTests {

	private final InMemoryLockProvider store = new InMemoryLockProvider();

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final DefaultLockTemplate template = template();

	private final DefaultLockTemplate otherJvm = template();

	private DefaultLockTemplate template() {
		return new DefaultLockTemplate(this.store, this.scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build());
	}

	@AfterEach
	void close() {
		this.scheduler.close();
	}

	@Test
	void excludesOtherJvmsUntilTheLastUnlockOfItsReentrantHolder() throws Exception {
		KeyLock lock = KeyLock.of(this.template, "view-reentrant");
		KeyLock elsewhere = KeyLock.of(this.otherJvm, "view-reentrant");
		lock.lock();
		assertThat(lock.tryLock()).as("re-entry by the holder").isTrue();
		KeyLock another = KeyLock.of(this.template, "view-reentrant");
		assertThat(another.tryLock()).as("re-entry through another view").isTrue();
		another.unlock();
		assertThat((Boolean) onOtherThread(() -> elsewhere.tryLock())).isFalse();
		lock.unlock();
		assertThat(onOtherThread(() -> elsewhere.tryLock())).as("still held after one of two unlocks").isFalse();
		lock.unlock();
		assertThat(lock.isHeldByCurrentThread()).isFalse();
		assertThat(onOtherThread(() -> {
			boolean taken = elsewhere.tryLock();
			elsewhere.unlock();
			return taken;
		})).isTrue();
	}

	@Test
	void givesTheLeaseAndItsFencingTokenToItsHolder() {
		KeyLock lock = KeyLock.of(this.template, "view-token");
		lock.lock();
		try {
			assertThat(lock.lease()).isPresent();
			assertThat(LockContext.current()).contains(lock.lease().orElseThrow());
			assertThat(lock.lease().orElseThrow().fencingToken()).isPositive();
		}
		finally {
			lock.unlock();
		}
		assertThat(lock.lease()).isEmpty();
		assertThat(LockContext.current()).isEmpty();
	}

	@Test
	void unlockByAThreadThatDoesNotHoldItThrows() throws Exception {
		KeyLock lock = KeyLock.of(this.template, "view-owner");
		assertThatExceptionOfType(IllegalMonitorStateException.class).isThrownBy(lock::unlock)
			.withMessageContaining("view-owner");
		lock.lock();
		try {
			CompletableFuture<Void> other = Waiter.<Void>start("other-thread", () -> {
				lock.unlock();
				return null;
			}).result;
			assertThatExceptionOfType(Exception.class).isThrownBy(other::join)
				.withCauseInstanceOf(IllegalMonitorStateException.class);
			assertThat(lock.isHeldByCurrentThread()).isTrue();
		}
		finally {
			lock.unlock();
		}
	}

	@Test
	void conditionsAreUnsupported() {
		assertThatExceptionOfType(UnsupportedOperationException.class)
			.isThrownBy(() -> KeyLock.of(this.template, "view-condition").newCondition())
			.withMessageContaining("view-condition");
	}

	@Test
	void lockWaitsForTheHolderAndLockInterruptiblyStopsWhenInterrupted() throws Exception {
		KeyLock lock = KeyLock.of(this.template, "view-wait");
		KeyLock elsewhere = KeyLock.of(this.otherJvm, "view-wait");
		lock.lock();
		CountDownLatch acquired = new CountDownLatch(1);
		Thread waiter = new Thread(() -> {
			elsewhere.lock();
			acquired.countDown();
			elsewhere.unlock();
		});
		waiter.start();
		AtomicBoolean interrupted = new AtomicBoolean();
		Thread impatient = new Thread(() -> {
			try {
				elsewhere.lockInterruptibly();
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
			}
		});
		impatient.start();
		Await.parked(impatient);
		impatient.interrupt();
		impatient.join(10_000);
		assertThat(interrupted).isTrue();
		assertThat(acquired.getCount()).as("waiting while held").isOne();
		lock.unlock();
		assertThat(acquired.await(10, TimeUnit.SECONDS)).isTrue();
		waiter.join(10_000);
	}

	@Test
	void lockSetsInterruptsAsideUntilItHoldsTheLockAndThenRestoresTheFlag() throws Exception {
		KeyLock lock = KeyLock.of(this.template, "view-uninterruptible");
		KeyLock elsewhere = KeyLock.of(this.otherJvm, "view-uninterruptible");
		lock.lock();
		CompletableFuture<Boolean> interruptedWhenHeld = new CompletableFuture<>();
		Thread waiter = new Thread(() -> {
			elsewhere.lock();
			interruptedWhenHeld.complete(Thread.currentThread().isInterrupted() && elsewhere.isHeldByCurrentThread());
			elsewhere.unlock();
		});
		waiter.start();
		Await.parked(waiter);
		waiter.interrupt();
		Await.until("the waiter waits again after the interrupt", Duration.ofSeconds(10),
				() -> waiter.getState() == Thread.State.TIMED_WAITING);
		assertThat(interruptedWhenHeld).as("still waiting while the lock is held").isNotDone();
		lock.unlock();
		assertThat(interruptedWhenHeld.get(10, TimeUnit.SECONDS)).isTrue();
		waiter.join(10_000);
	}

	@Test
	void aLeaseLostWhileHeldFailsReentryAndTheLastUnlock() {
		KeyLock lock = KeyLock.of(this.template, "view-lost",
				LockOptions.builder().leaseTime(Duration.ofMillis(300)).autoRenew(false).build());
		lock.lock();
		Await.until("the lease runs out", Duration.ofSeconds(10), () -> !lock.lease().orElseThrow().isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lock::tryLock);
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lock::unlock);
		assertThat(lock.isHeldByCurrentThread()).isFalse();
	}

	private static boolean onOtherThread(java.util.concurrent.Callable<Boolean> call) throws Exception {
		CompletableFuture<Boolean> result = new CompletableFuture<>();
		Thread thread = new Thread(() -> {
			try {
				result.complete(call.call());
			}
			catch (Throwable ex) {
				result.completeExceptionally(ex);
			}
		});
		thread.start();
		return result.get(10, TimeUnit.SECONDS);
	}

}
