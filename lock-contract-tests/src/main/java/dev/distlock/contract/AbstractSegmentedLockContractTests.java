package dev.distlock.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.SegmentedLock;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a segmented lock must do on every store with multi-key locks
 * ({@link LockKind#MULTI}): callers spread over free segments, skip segments known empty,
 * take several segments together when one holds too little, and never sell more than the
 * stock, however many callers in however many JVMs. A store module extends this class
 * with a provider on a real, running store and a second provider on the same store.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
public abstract class AbstractSegmentedLockContractTests {

	/**
	 * A provider for the store under test, with multi-key locks; called once per test.
	 */
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
		return "stock-" + UUID.randomUUID();
	}

	@Test
	void freeSegmentsAreSpreadOverCallers() {
		SegmentedLock stock = this.templates.first.segmented(key(), 4);
		List<Lease> held = new ArrayList<>();
		Set<Integer> segments = new HashSet<>();
		for (int i = 0; i < 4; i++) {
			SegmentedLock.SegmentLease lease = stock.tryAcquireAny(TwoTemplates.waiting(Duration.ZERO)).orElseThrow();
			assertThat(lease.key()).isEqualTo(stock.segmentKey(lease.segment()));
			held.add(lease);
			segments.add(lease.segment());
		}
		assertThat(segments).containsExactlyInAnyOrder(0, 1, 2, 3);
		assertThat(this.templates.second.segmented(stock.key(), 4).tryAcquireAny(TwoTemplates.waiting(Duration.ZERO)))
			.as("every segment is held")
			.isEmpty();
		held.forEach(Lease::release);
	}

	@Test
	void segmentsKnownEmptyAreSkipped() {
		SegmentedLock stock = this.templates.first.segmented(key(), 3);
		stock.markEmpty(0);
		stock.markEmpty(2);
		for (int i = 0; i < 5; i++) {
			try (SegmentedLock.SegmentLease lease = stock.tryAcquireAny(LockOptions.defaults()).orElseThrow()) {
				assertThat(lease.segment()).isEqualTo(1);
			}
		}
		stock.markEmpty(1);
		long start = System.nanoTime();
		assertThat(stock.tryAcquireAny(TwoTemplates.waiting(Duration.ofSeconds(20)))).as("every segment is empty")
			.isEmpty();
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("no wait for a stock known empty")
			.isLessThan(Duration.ofSeconds(10));
		stock.markAvailable(2);
		assertThat(stock.isKnownEmpty(2)).isFalse();
		stock.tryAcquireAny(LockOptions.defaults()).orElseThrow().release();
	}

	@Test
	void severalSegmentsAreTakenTogetherWhenOneHoldsTooLittle() {
		SegmentedLock stock = this.templates.first.segmented(key(), 4);
		CheckedStock units = new CheckedStock(stock, 2, 2, 2, 2);
		assertThat(stock.take(5, LockOptions.defaults(), units)).isTrue();
		assertThat(units.total()).isEqualTo(3);
		assertThat(stock.take(4, LockOptions.defaults(), units)).as("more than is left").isFalse();
		assertThat(units.total()).as("nothing taken by a refused order").isEqualTo(3);
		assertThat(stock.take(3, LockOptions.defaults(), units)).isTrue();
		assertThat(units.total()).isZero();
		assertThat(stock.take(1, LockOptions.defaults(), units)).isFalse();
		assertThat(units.violations()).isZero();
	}

	@Test
	void concurrentBuyersInTwoJvmsNeverOversell() throws Exception {
		String key = key();
		int segments = 8;
		int perSegment = 25;
		SegmentedLock here = this.templates.first.segmented(key, segments);
		SegmentedLock there = this.templates.second.segmented(key, segments);
		int[] initial = new int[segments];
		java.util.Arrays.fill(initial, perSegment);
		CheckedStock units = new CheckedStock(here, initial);
		AtomicInteger sold = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			List<Future<?>> buyers = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				SegmentedLock lock = (t % 2 == 0) ? here : there;
				int quantity = 1 + t % 3;
				buyers.add(pool.submit(() -> {
					for (int i = 0; i < 60; i++) {
						if (lock.take(quantity, TwoTemplates.waiting(Duration.ofSeconds(5)), units)) {
							sold.addAndGet(quantity);
						}
					}
				}));
			}
			for (Future<?> buyer : buyers) {
				buyer.get(50, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(units.violations()).as("a segment used by two holders at once, or without its lock").isZero();
		assertThat(units.total()).as("stock left").isGreaterThanOrEqualTo(0);
		assertThat(sold.get() + units.total()).as("units sold plus units left").isEqualTo(segments * perSegment);
	}

	@Test
	void badSegmentsAreRefused() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> this.templates.first.segmented(key(), 0))
			.withMessageContaining("at least 1 segment");
		SegmentedLock stock = this.templates.first.segmented(key(), 2);
		assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> stock.markEmpty(2))
			.withMessageContaining("0 to 1");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> stock.take(0, LockOptions.defaults(), new CheckedStock(stock, 1, 1)));
	}

	/**
	 * Units per segment, in memory, that count every use of a segment by a caller not
	 * holding its lock or alongside another holder.
	 */
	static final class CheckedStock implements SegmentedLock.Stock {

		private final SegmentedLock lock;

		private final AtomicIntegerArray units;

		private final AtomicIntegerArray users;

		private final AtomicInteger violations = new AtomicInteger();

		CheckedStock(SegmentedLock lock, int... units) {
			this.lock = lock;
			this.units = new AtomicIntegerArray(units);
			this.users = new AtomicIntegerArray(units.length);
		}

		@Override
		public int available(int segment, Lease lease) {
			check(segment, lease);
			return this.units.get(segment);
		}

		@Override
		public void take(int segment, int quantity, Lease lease) {
			check(segment, lease);
			if (this.users.incrementAndGet(segment) != 1) {
				this.violations.incrementAndGet();
			}
			int left = this.units.addAndGet(segment, -quantity);
			if (left < 0) {
				this.violations.incrementAndGet();
			}
			this.users.decrementAndGet(segment);
		}

		private void check(int segment, Lease lease) {
			String key = this.lock.segmentKey(segment);
			boolean covers = (lease instanceof MultiLease multi) ? multi.keys().contains(key) : lease.key().equals(key);
			if (!covers || !lease.isHeld()) {
				this.violations.incrementAndGet();
			}
		}

		int total() {
			int total = 0;
			for (int i = 0; i < this.units.length(); i++) {
				total += this.units.get(i);
			}
			return total;
		}

		int violations() {
			return this.violations.get();
		}

	}

}
