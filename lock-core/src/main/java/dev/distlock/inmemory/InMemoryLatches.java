package dev.distlock.inmemory;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.DistributedLatch;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.ReleaseSignals;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store's countdown latches: one entry per latch, changed only inside a
 * {@code compute} on its key, expiring on the monotonic clock when untouched.
 */
final class InMemoryLatches implements LatchStore {

	/** Generations rise across every latch and across expiry, as on Redis. */
	private final AtomicLong generations = new AtomicLong();

	private final ConcurrentHashMap<String, Latch> latches = new ConcurrentHashMap<>();

	private final ConcurrentHashMap<String, Set<Runnable>> subscribers = new ConcurrentHashMap<>();

	private final ReleaseSignals signals = new ReleaseSignals() {

		@Override
		public Subscription subscribe(String key, Runnable onChange) {
			InMemoryLatches.this.subscribers.computeIfAbsent(key, (k) -> new CopyOnWriteArraySet<>()).add(onChange);
			return () -> InMemoryLatches.this.subscribers.computeIfPresent(key, (k, set) -> {
				set.remove(onChange);
				return set.isEmpty() ? null : set;
			});
		}

		@Override
		public boolean isListening() {
			return true;
		}

	};

	@Override
	public ReleaseSignals signals() {
		return this.signals;
	}

	@Override
	public LatchState join(String key, int count, Duration expiry) {
		long ttl = positive(expiry);
		return state(this.latches.compute(key, (k, latch) -> {
			Latch current = live(latch);
			if (current == null) {
				current = new Latch(this.generations.incrementAndGet(), count, 0, false);
			}
			current.expiresAt = System.nanoTime() + ttl;
			return current;
		}));
	}

	@Override
	public DistributedLatch.CountDown countDown(String key, long generation, String participant, Duration expiry) {
		long ttl = positive(expiry);
		DistributedLatch.CountDown[] outcome = { DistributedLatch.CountDown.STALE };
		this.latches.compute(key, (k, latch) -> {
			Latch current = live(latch);
			if (current == null || current.generation != generation) {
				return current;
			}
			if (current.counted.contains(participant)) {
				outcome[0] = DistributedLatch.CountDown.ALREADY_COUNTED;
			}
			else if (current.counted.size() >= current.count) {
				outcome[0] = DistributedLatch.CountDown.ALREADY_OPEN;
			}
			else {
				current.counted.add(participant);
				current.expiresAt = System.nanoTime() + ttl;
				outcome[0] = DistributedLatch.CountDown.COUNTED;
			}
			return current;
		});
		if (outcome[0] == DistributedLatch.CountDown.COUNTED) {
			signal(key);
		}
		return outcome[0];
	}

	@Override
	public @Nullable LatchState state(String key) {
		Latch latch = this.latches.computeIfPresent(key, (k, current) -> live(current));
		return (latch != null) ? state(latch) : null;
	}

	@Override
	public LatchState rearm(String key, long generation, int count, Duration expiry) {
		long ttl = positive(expiry);
		Latch rearmed = this.latches.compute(key, (k, latch) -> {
			Latch current = live(latch);
			if (current != null && current.generation != generation) {
				return current;
			}
			Latch next = (current != null)
					? new Latch(this.generations.incrementAndGet(), count, current.generation,
							current.counted.size() >= current.count)
					: new Latch(this.generations.incrementAndGet(), count, 0, false);
			next.expiresAt = System.nanoTime() + ttl;
			return next;
		});
		signal(key);
		return state(rearmed);
	}

	private void signal(String key) {
		Set<Runnable> set = this.subscribers.get(key);
		if (set != null) {
			set.forEach(Runnable::run);
		}
	}

	private static @Nullable Latch live(@Nullable Latch latch) {
		return (latch != null && System.nanoTime() - latch.expiresAt < 0) ? latch : null;
	}

	private static LatchState state(Latch latch) {
		return new LatchState(latch.generation, latch.count, Math.max(0, latch.count - latch.counted.size()),
				latch.previousGeneration, latch.previousOpened);
	}

	private static long positive(Duration duration) {
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException("A latch's expiry must be positive but was " + duration);
		}
		return duration.toNanos();
	}

	/** Only ever touched inside a {@code compute} on its key. */
	private static final class Latch {

		final long generation;

		final int count;

		final long previousGeneration;

		final boolean previousOpened;

		final Set<String> counted = new HashSet<>();

		long expiresAt;

		Latch(long generation, int count, long previousGeneration, boolean previousOpened) {
			this.generation = generation;
			this.count = count;
			this.previousGeneration = previousGeneration;
			this.previousOpened = previousOpened;
		}

	}

}
