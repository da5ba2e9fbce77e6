package dev.distlock.contract;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.distlock.DistributedLatch;
import dev.distlock.DistributedLatch.CountDown;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What every store with countdown latches ({@link LatchStore}) must do: open after
 * exactly {@code count} distinct participants, whatever the retries; wake waiters when it
 * opens; expire when abandoned; and keep each generation apart, so late calls cannot
 * touch a re-armed latch. A store module extends this class with a provider on a real,
 * running store and a second provider on the same store (as another JVM would have).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractLatchContractTests {

	private static final Duration EXPIRY = Duration.ofMinutes(1);

	/** A provider for the store under test, with latches; called once per test. */
	protected abstract LockProvider provider();

	/** A second provider on the same store, as another JVM would have. */
	protected abstract LockProvider otherProvider();

	private TwoTemplates templates;

	@BeforeEach
	void templates() {
		this.templates = new TwoTemplates(provider(), otherProvider());
	}

	@AfterEach
	void closeTemplates() {
		this.templates.close();
	}

	private static String key() {
		return "latch-" + UUID.randomUUID();
	}

	@Test
	void opensAfterCountDistinctParticipantsAcrossJvms() throws Exception {
		String key = key();
		DistributedLatch here = this.templates.first.latch(key, 3, EXPIRY);
		DistributedLatch there = this.templates.second.latch(key, 3, EXPIRY);
		assertThat(there.generation()).isEqualTo(here.generation());
		assertThat(here.countDown("a")).isEqualTo(CountDown.COUNTED);
		assertThat(there.countDown("b")).isEqualTo(CountDown.COUNTED);
		assertThat(here.getCount()).isEqualTo(1);
		assertThat(here.await(Duration.ZERO)).isFalse();
		assertThat(there.countDown("c")).isEqualTo(CountDown.COUNTED);
		assertThat(here.await(Duration.ZERO)).isTrue();
		assertThat(there.getCount()).isZero();
		assertThat(here.countDown("d")).isEqualTo(CountDown.ALREADY_OPEN);
	}

	@Test
	@DisplayName("A retried countDown counts once (Redisson's RCountDownLatch counts it twice)")
	void aRetriedCountDownCountsOnce() throws Exception {
		String key = key();
		DistributedLatch latch = this.templates.first.latch(key, 2, EXPIRY);
		assertThat(latch.countDown("worker-1")).isEqualTo(CountDown.COUNTED);
		assertThat(latch.countDown("worker-1")).isEqualTo(CountDown.ALREADY_COUNTED);
		assertThat(this.templates.second.latch(key, 2, EXPIRY).countDown("worker-1"))
			.as("the same participant from another JVM")
			.isEqualTo(CountDown.ALREADY_COUNTED);
		assertThat(latch.getCount()).isEqualTo(1);
		assertThat(latch.await(Duration.ofMillis(50))).as("not opened early").isFalse();
	}

	@Test
	void awaitIsWokenWhenTheLatchOpens() throws Exception {
		String key = key();
		// Re-checks only every minute: the opening's signal is what must wake it.
		DistributedLatch latch = this.templates.slowRetry(provider()).latch(key, 1, EXPIRY);
		AtomicReference<Object> outcome = new AtomicReference<>();
		Thread waiter = new Thread(() -> {
			try {
				outcome.set(latch.await(Duration.ofSeconds(30)));
			}
			catch (Exception ex) {
				outcome.set(ex);
			}
		});
		waiter.start();
		Conditions.await("the waiter parks", Duration.ofSeconds(10),
				() -> waiter.getState() == Thread.State.TIMED_WAITING || waiter.getState() == Thread.State.WAITING);
		assertThat(this.templates.second.latch(key, 1, EXPIRY).countDown("last")).isEqualTo(CountDown.COUNTED);
		waiter.join(TimeUnit.SECONDS.toMillis(25));
		assertThat(outcome.get()).isEqualTo(true);
	}

	@Test
	void anInterruptedAwaitThrows() throws Exception {
		DistributedLatch latch = this.templates.first.latch(key(), 1, EXPIRY);
		AtomicReference<Object> outcome = new AtomicReference<>();
		Thread waiter = new Thread(() -> {
			try {
				outcome.set(latch.await(Duration.ofSeconds(30)));
			}
			catch (Exception ex) {
				outcome.set(ex);
			}
		});
		waiter.start();
		Conditions.await("the waiter parks", Duration.ofSeconds(10),
				() -> waiter.getState() == Thread.State.TIMED_WAITING || waiter.getState() == Thread.State.WAITING);
		waiter.interrupt();
		waiter.join(TimeUnit.SECONDS.toMillis(30));
		assertThat(outcome.get()).isInstanceOf(InterruptedException.class);
	}

	@Test
	void aDifferentCountForTheSameLatchIsAnError() {
		String key = key();
		this.templates.first.latch(key, 3, EXPIRY);
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.templates.second.latch(key, 4, EXPIRY))
			.withMessageContaining(key)
			.withMessageContaining("count of 3, not 4");
	}

	@Test
	void lateCallsCannotTouchARearmedLatch() throws Exception {
		String key = key();
		DistributedLatch first = this.templates.first.latch(key, 1, EXPIRY);
		assertThat(first.countDown("a")).isEqualTo(CountDown.COUNTED);
		DistributedLatch second = first.rearm(2);
		assertThat(second.generation()).isGreaterThan(first.generation());
		assertThat(first.countDown("b")).as("a late call of the first generation").isEqualTo(CountDown.STALE);
		assertThat(second.getCount()).isEqualTo(2);
		assertThat(first.await(Duration.ZERO)).as("the first generation had opened").isTrue();
		assertThat(this.templates.second.latch(key, 2, EXPIRY).generation()).isEqualTo(second.generation());
		DistributedLatch raced = first.rearm(2);
		assertThat(raced.generation()).as("a second re-arm of the same generation joins the first")
			.isEqualTo(second.generation());
		DistributedLatch third = second.rearm(1);
		assertThat(second.countDown("c")).isEqualTo(CountDown.STALE);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> second.await(Duration.ZERO))
			.withMessageContaining("re-armed");
		assertThat(third.getCount()).isEqualTo(1);
	}

	@Test
	void anAbandonedLatchExpires() {
		String key = key();
		DistributedLatch abandoned = this.templates.first.latch(key, 2, Duration.ofMillis(200));
		assertThat(abandoned.countDown("a")).isEqualTo(CountDown.COUNTED);
		Conditions.await("the latch expires", Duration.ofSeconds(10),
				() -> provider().latches().orElseThrow().state(key) == null);
		assertThat(abandoned.countDown("b")).as("a late call on the expired latch").isEqualTo(CountDown.STALE);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(abandoned::getCount)
			.withMessageContaining("expired");
		DistributedLatch fresh = this.templates.second.latch(key, 2, EXPIRY);
		assertThat(fresh.generation()).isGreaterThan(abandoned.generation());
		assertThat(fresh.getCount()).isEqualTo(2);
	}

	@Test
	void badArgumentsAreRefused() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.templates.first.latch(key(), 0, EXPIRY))
			.withMessageContaining("count of at least 1");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.templates.first.latch(key(), 1, Duration.ZERO))
			.withMessageContaining("positive expiry");
		DistributedLatch latch = this.templates.first.latch(key(), 1, EXPIRY);
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> latch.countDown(" "))
			.withMessageContaining("participant");
	}

}
