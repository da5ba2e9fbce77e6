package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.function.Predicate;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.SegmentedLock;

/**
 * {@link SegmentedLock} over a template's plain and multi-key locks. Segment {@code i} is
 * the plain key {@code <key>#<i>}.
 *
 * <p>
 * One segment is chosen by a random start over the segments not known empty, those held
 * by this JVM last (so the callers of one JVM spread, and callers of different JVMs meet
 * only by chance); each is tried once without waiting, and if all are busy the caller
 * waits for one (chosen at random) for at most a retry interval before trying them all
 * again, until its wait time runs out. When a segment holds too little, {@link #take}
 * takes several together: first those this JVM last saw holding the most (enough by what
 * it saw), then, if they hold too little after all, every segment not known empty.
 */
final class DefaultSegmentedLock implements SegmentedLock {

	/** Set in {@link #lastSeen} for a segment whose quantity this JVM has not read. */
	private static final int UNKNOWN = -1;

	private final LockTemplate template;

	private final String key;

	private final int segments;

	private final Predicate<String> heldHere;

	private final LockOptions defaults;

	/** Per segment: marked empty (1) or not (0). */
	private final AtomicIntegerArray empty;

	/** Per segment: the quantity last read here, or {@link #UNKNOWN}. */
	private final AtomicIntegerArray lastSeen;

	DefaultSegmentedLock(LockTemplate template, String key, int segments, Predicate<String> heldHere,
			LockOptions defaults) {
		if (segments < 1) {
			throw new IllegalArgumentException(
					"Segmented lock '" + key + "' needs at least 1 segment but was given " + segments);
		}
		this.template = template;
		this.key = key;
		this.segments = segments;
		this.heldHere = heldHere;
		this.defaults = defaults;
		this.empty = new AtomicIntegerArray(segments);
		this.lastSeen = new AtomicIntegerArray(segments);
		for (int i = 0; i < segments; i++) {
			this.lastSeen.set(i, UNKNOWN);
		}
	}

	@Override
	public String key() {
		return this.key;
	}

	@Override
	public int segments() {
		return this.segments;
	}

	@Override
	public String segmentKey(int segment) {
		check(segment);
		return this.key + "#" + segment;
	}

	@Override
	public Optional<SegmentLease> tryAcquireAny(LockOptions options) {
		LockSettings settings = LockSettings.of(options, this.defaults);
		return acquireAny(options, settings, System.nanoTime() + settings.waitTime().toNanos());
	}

	private Optional<SegmentLease> acquireAny(LockOptions options, LockSettings settings, long deadline) {
		LockOptions noWait = LockOptions.builder().waitTime(Duration.ZERO).build().orElse(options);
		while (true) {
			List<Integer> order = spreadOrder();
			if (order.isEmpty()) {
				return Optional.empty();
			}
			for (int segment : order) {
				Optional<Lease> lease = this.template.tryAcquire(segmentKey(segment), noWait);
				if (lease.isPresent()) {
					return Optional.of(new Segment(segment, lease.get()));
				}
			}
			long left = deadline - System.nanoTime();
			if (left <= 0) {
				return Optional.empty();
			}
			int segment = order.get(ThreadLocalRandom.current().nextInt(order.size()));
			Duration slice = Duration.ofNanos(Math.min(left, settings.retryInterval().toNanos()));
			Optional<Lease> lease = this.template.tryAcquire(segmentKey(segment),
					LockOptions.builder().waitTime(slice).build().orElse(options));
			if (lease.isPresent()) {
				return Optional.of(new Segment(segment, lease.get()));
			}
		}
	}

	/**
	 * The segments not known empty, from a random start, those held here moved to the
	 * end.
	 */
	private List<Integer> spreadOrder() {
		int start = ThreadLocalRandom.current().nextInt(this.segments);
		List<Integer> free = new ArrayList<>(this.segments);
		List<Integer> heldHere = new ArrayList<>();
		for (int i = 0; i < this.segments; i++) {
			int segment = (start + i) % this.segments;
			if (this.empty.get(segment) == 0) {
				(this.heldHere.test(segmentKey(segment)) ? heldHere : free).add(segment);
			}
		}
		free.addAll(heldHere);
		return free;
	}

	@Override
	public MultiLease acquireSegments(Collection<Integer> segments, LockOptions options) {
		List<String> keys = new ArrayList<>(segments.size());
		for (int segment : segments) {
			keys.add(segmentKey(segment));
		}
		return this.template.acquireAll(keys, options);
	}

	@Override
	public void markEmpty(int segment) {
		check(segment);
		this.empty.set(segment, 1);
		this.lastSeen.set(segment, 0);
	}

	@Override
	public void markAvailable(int segment) {
		check(segment);
		this.empty.set(segment, 0);
		this.lastSeen.set(segment, UNKNOWN);
	}

	@Override
	public boolean isKnownEmpty(int segment) {
		check(segment);
		return this.empty.get(segment) == 1;
	}

	@Override
	public boolean take(int quantity, LockOptions options, Stock stock) {
		if (quantity < 1) {
			throw new IllegalArgumentException(
					"Quantity to take from '" + this.key + "' must be at least 1 but was " + quantity);
		}
		LockSettings settings = LockSettings.of(options, this.defaults);
		long deadline = System.nanoTime() + settings.waitTime().toNanos();
		while (true) {
			Optional<SegmentLease> one = acquireAny(options, settings, deadline);
			if (one.isEmpty()) {
				return false;
			}
			int available;
			try (SegmentLease lease = one.get()) {
				available = seen(lease.segment(), stock.available(lease.segment(), lease));
				if (available >= quantity) {
					stock.take(lease.segment(), quantity, lease);
					seen(lease.segment(), available - quantity);
					return true;
				}
			}
			if (available > 0) {
				break;
			}
		}
		// One segment holds too little: several together, in sorted order.
		List<Integer> likely = likelyEnough(quantity);
		Boolean taken = takeFromSeveral(likely, quantity, options, stock, deadline);
		if (taken == null && likely.size() < notKnownEmpty().size()) {
			taken = takeFromSeveral(notKnownEmpty(), quantity, options, stock, deadline);
		}
		return Boolean.TRUE.equals(taken);
	}

	/**
	 * Takes from {@code candidates} together.
	 * @return true if taken, null if they hold too little, false if not acquired in time
	 */
	private Boolean takeFromSeveral(List<Integer> candidates, int quantity, LockOptions options, Stock stock,
			long deadline) {
		if (candidates.isEmpty()) {
			return null;
		}
		Duration left = Duration.ofNanos(Math.max(0, deadline - System.nanoTime()));
		Optional<MultiLease> multi = this.template.tryAcquireAll(candidates.stream().map(this::segmentKey).toList(),
				LockOptions.builder().waitTime(left).build().orElse(options));
		if (multi.isEmpty()) {
			return false;
		}
		try (MultiLease lease = multi.get()) {
			List<Integer> sorted = candidates.stream().sorted(Comparator.comparing(this::segmentKey)).toList();
			int[] available = new int[sorted.size()];
			long total = 0;
			for (int i = 0; i < sorted.size(); i++) {
				available[i] = seen(sorted.get(i), stock.available(sorted.get(i), lease));
				total += available[i];
			}
			if (total < quantity) {
				return null;
			}
			int missing = quantity;
			for (int i = 0; i < sorted.size() && missing > 0; i++) {
				int draw = Math.min(missing, available[i]);
				if (draw > 0) {
					stock.take(sorted.get(i), draw, lease);
					seen(sorted.get(i), available[i] - draw);
					missing -= draw;
				}
			}
			return true;
		}
	}

	/**
	 * Segments not known empty, those last seen holding most first (unread ones first of
	 * all), as many as their last seen quantities need to reach {@code quantity}.
	 */
	private List<Integer> likelyEnough(int quantity) {
		List<Integer> byQuantity = new ArrayList<>(notKnownEmpty());
		byQuantity.sort(Comparator.comparingInt((Integer segment) -> {
			int seen = this.lastSeen.get(segment);
			return (seen == UNKNOWN) ? Integer.MIN_VALUE : -seen;
		}));
		List<Integer> chosen = new ArrayList<>();
		long sum = 0;
		for (int segment : byQuantity) {
			chosen.add(segment);
			int seen = this.lastSeen.get(segment);
			sum += (seen == UNKNOWN) ? quantity : seen;
			if (sum >= quantity && chosen.size() > 1) {
				break;
			}
		}
		return chosen;
	}

	private List<Integer> notKnownEmpty() {
		List<Integer> segments = new ArrayList<>(this.segments);
		for (int i = 0; i < this.segments; i++) {
			if (this.empty.get(i) == 0) {
				segments.add(i);
			}
		}
		return segments;
	}

	/** Records what was read of {@code segment}; marks it empty at 0. */
	private int seen(int segment, int available) {
		this.lastSeen.set(segment, Math.max(0, available));
		if (available <= 0) {
			this.empty.set(segment, 1);
		}
		return available;
	}

	private void check(int segment) {
		if (segment < 0 || segment >= this.segments) {
			throw new IllegalArgumentException("Segment " + segment + " of '" + this.key + "' does not exist: it has "
					+ this.segments + " segments, 0 to " + (this.segments - 1));
		}
	}

	@Override
	public String toString() {
		return "SegmentedLock[key=" + this.key + ", segments=" + this.segments + "]";
	}

	/** One segment's lease. */
	private record Segment(int segment, Lease lease) implements SegmentLease {

		@Override
		public String key() {
			return this.lease.key();
		}

		@Override
		public long fencingToken() {
			return this.lease.fencingToken();
		}

		@Override
		public boolean isHeld() {
			return this.lease.isHeld();
		}

		@Override
		public void release() {
			this.lease.release();
		}

	}

}
