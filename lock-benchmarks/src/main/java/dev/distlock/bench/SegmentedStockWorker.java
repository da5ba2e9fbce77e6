package dev.distlock.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.SegmentedLock;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * One instance of the hot-inventory scenario: {@code threads} buyers ordering one unit at
 * a time from one SKU's stock in Redis (a hash, field {@code s<i>} per segment,
 * {@code accepted}) until it is sold out, either under one lock on the SKU or under a
 * {@link SegmentedLock}. Each order reads the stock under the lock, works for
 * {@link #WORK} (a payment, a reservation), then writes. Also the {@code main} of the
 * second JVM.
 */
final class SegmentedStockWorker implements AutoCloseable {

	/** The work inside the lock, per order. */
	static final Duration WORK = Duration.ofMillis(1);

	private final LettuceConnectionFactory factory;

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final RedisLockProvider provider;

	final DefaultLockTemplate template;

	final StringRedisTemplate redis;

	SegmentedStockWorker(int port) {
		this.factory = Lib.connectionFactory(port);
		this.provider = new RedisLockProvider(this.factory, "distlock:", false);
		this.template = new DefaultLockTemplate(this.provider, this.scheduler,
				Lib.Distlock.options(Duration.ofSeconds(30), false));
		this.redis = new StringRedisTemplate(this.factory);
		this.redis.afterPropertiesSet();
	}

	/** Sets the stock of {@code sku}: {@code units} over {@code segments} fields. */
	void restock(String sku, int units, int segments) {
		this.redis.delete(sku);
		for (int i = 0; i < segments; i++) {
			this.redis.opsForHash()
				.put(sku, "s" + i, Integer.toString(units / segments + ((i < units % segments) ? 1 : 0)));
		}
		this.redis.opsForHash().put(sku, "accepted", "0");
	}

	/**
	 * Runs the buyers from {@code startNanos} until the stock is gone.
	 * @return units this instance sold, and when its last buyer stopped
	 */
	long[] run(String sku, int segments, int threads, long startNanos) throws InterruptedException {
		AtomicLong sold = new AtomicLong();
		AtomicLong lastEnd = new AtomicLong(startNanos);
		List<Thread> buyers = new ArrayList<>();
		List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
		SegmentedLock segmented = (segments > 1) ? this.template.segmented(sku, segments) : null;
		SegmentedLock.Stock stock = new SegmentedLock.Stock() {

			@Override
			public int available(int segment, Lease lease) {
				Object units = SegmentedStockWorker.this.redis.opsForHash().get(sku, "s" + segment);
				return (units != null) ? Integer.parseInt((String) units) : 0;
			}

			@Override
			public void take(int segment, int quantity, Lease lease) {
				LockSupport.parkNanos(WORK.toNanos());
				SegmentedStockWorker.this.redis.opsForHash().increment(sku, "s" + segment, -quantity);
				SegmentedStockWorker.this.redis.opsForHash().increment(sku, "accepted", quantity);
			}

		};
		for (int t = 0; t < threads; t++) {
			Thread buyer = new Thread(() -> {
				LockSupport.parkNanos(startNanos - System.nanoTime());
				try {
					while (true) {
						boolean taken = (segmented != null) ? segmented.take(1, LockOptions.defaults(), stock)
								: this.template.execute(sku, () -> {
									if (stock.available(0, null) <= 0) {
										return false;
									}
									stock.take(0, 1, null);
									return true;
								});
						if (!taken) {
							break;
						}
						sold.incrementAndGet();
					}
				}
				catch (Throwable ex) {
					failures.add(ex);
				}
				lastEnd.accumulateAndGet(System.nanoTime(), Math::max);
			});
			buyers.add(buyer);
			buyer.start();
		}
		for (Thread buyer : buyers) {
			buyer.join();
		}
		if (!failures.isEmpty()) {
			throw new IllegalStateException("A buyer failed", failures.get(0));
		}
		return new long[] { sold.get(), lastEnd.get() };
	}

	@Override
	public void close() {
		this.template.close();
		this.scheduler.close();
		this.provider.close();
		this.factory.destroy();
	}

	/**
	 * The second JVM. Arguments: Redis port, SKU, segments, threads. Prints
	 * {@code READY}, reads the start ({@code System.nanoTime}) from standard input,
	 * prints {@code RESULT <sold> <lastEndNanos>}.
	 */
	public static void main(String[] args) throws Exception {
		try (SegmentedStockWorker worker = new SegmentedStockWorker(Integer.parseInt(args[0]))) {
			worker.template.run("warm-up-child", () -> {
			});
			System.out.println("READY");
			System.out.flush();
			long start = Long.parseLong(
					new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine().trim());
			long[] result = worker.run(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), start);
			System.out.println("RESULT " + result[0] + " " + result[1]);
			System.out.flush();
		}
		System.exit(0);
	}

}
