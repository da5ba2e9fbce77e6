package dev.distlock.harness.family;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

/**
 * "Never a partial multi-key lock", checked under a fault: threads of two templates (two
 * JVMs' worth, each on its own provider) take random sets of 2 or 3 of a few keys in
 * random order with {@code acquireAll}, and plain locks on single keys, enter each key of
 * what they hold, pause, leave and release, while the fault is injected and healed.
 *
 * <p>
 * What must hold: no key is entered by two holders at once unless the older of them was
 * told its lease was lost ({@code LeaseLostException} at release); no unexpected error;
 * and after the run, with the fault healed, every key comes free within one lease of the
 * store answering again (a failed, timed-out or interrupted acquire left no key held for
 * good).
 */
public final class MultiLockFaultCheck {

	private static final int KEYS = 5;

	private final List<DefaultLockTemplate> templates = new ArrayList<>();

	private final List<RenewalScheduler> schedulers = new ArrayList<>();

	private final Duration lease;

	private final String prefix = "family-multi-" + System.nanoTime() + "-";

	private final Map<Integer, AtomicReference<Holding>> inside = new ConcurrentHashMap<>();

	private final List<Holding[]> overlaps = Collections.synchronizedList(new ArrayList<>());

	private final Map<String, AtomicLong> outcomes = new ConcurrentHashMap<>();

	private final List<String> errors = Collections.synchronizedList(new ArrayList<>());

	/**
	 * @param providers one provider per simulated JVM, all on the store under test
	 * @param lease the lease of every lock taken
	 */
	public MultiLockFaultCheck(List<LockProvider> providers, Duration lease) {
		this.lease = lease;
		LockOptions defaults = LockOptions.builder()
			.waitTime(lease.multipliedBy(2))
			.leaseTime(lease)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.build();
		for (LockProvider provider : providers) {
			RenewalScheduler scheduler = new RenewalScheduler();
			this.schedulers.add(scheduler);
			this.templates.add(new DefaultLockTemplate(provider, scheduler, defaults));
		}
		for (int k = 0; k < KEYS; k++) {
			this.inside.put(k, new AtomicReference<>());
		}
	}

	/**
	 * Runs {@code threads} threads per template for {@code duration}, with {@code fault}
	 * injected after a quarter of it and healed after three quarters.
	 */
	public Report run(FamilyFault fault, int threads, Duration duration, long seed) throws InterruptedException {
		long start = System.nanoTime();
		long end = start + duration.toNanos();
		List<Thread> workers = new ArrayList<>();
		for (int t = 0; t < this.templates.size(); t++) {
			for (int i = 0; i < threads; i++) {
				DefaultLockTemplate template = this.templates.get(t);
				Random random = new Random(seed * 31 + t * 101 + i);
				Thread worker = new Thread(() -> {
					while (System.nanoTime() - end < 0) {
						once(template, random);
						Thread.interrupted();
					}
				}, "family-multi-" + t + "-" + i);
				workers.add(worker);
				worker.start();
			}
		}
		LockSupport.parkNanos(duration.toNanos() / 4);
		fault.inject();
		try {
			LockSupport.parkNanos(duration.toNanos() / 2);
		}
		finally {
			fault.heal();
		}
		for (Thread worker : workers) {
			worker.join(duration.plus(this.lease.multipliedBy(6)).plusSeconds(30).toMillis());
			if (worker.isAlive()) {
				this.errors.add(worker.getName() + " did not finish");
			}
		}
		long unsignalled = this.overlaps.stream().filter((pair) -> !older(pair).lost).count();
		boolean freed = allFreeWithin(this.lease.plusSeconds(2));
		return new Report(fault.toString(),
				Map.copyOf(this.outcomes.entrySet()
					.stream()
					.collect(java.util.stream.Collectors.toMap(Map.Entry::getKey, (e) -> e.getValue().get()))),
				this.overlaps.size(), unsignalled, freed, List.copyOf(this.errors));
	}

	private static Holding older(Holding[] pair) {
		return (pair[0].token < pair[1].token) ? pair[0] : pair[1];
	}

	private void once(DefaultLockTemplate template, Random random) {
		List<Integer> keys = new ArrayList<>();
		int size = (random.nextInt(4) == 0) ? 1 : 2 + random.nextInt(2);
		while (keys.size() < size) {
			int key = random.nextInt(KEYS);
			if (!keys.contains(key)) {
				keys.add(key);
			}
		}
		Lease lease;
		try {
			lease = (size == 1) ? template.acquire(this.prefix + keys.get(0), LockOptions.defaults())
					: template.acquireAll(keys.stream().map((k) -> this.prefix + k).toList(), LockOptions.defaults());
		}
		catch (LockAcquisitionException ex) {
			count("not acquired");
			return;
		}
		catch (LockBackendException ex) {
			count("store failed at acquire");
			return;
		}
		catch (RuntimeException ex) {
			this.errors.add("acquire: " + ex);
			return;
		}
		List<Holding> held = new ArrayList<>();
		for (int key : keys) {
			long token = (lease instanceof MultiLease multi) ? multi.fencingToken(this.prefix + key)
					: lease.fencingToken();
			Holding holding = new Holding(token);
			Holding previous = this.inside.get(key).getAndSet(holding);
			if (previous != null) {
				this.overlaps.add(new Holding[] { previous, holding });
			}
			held.add(holding);
		}
		LockSupport.parkNanos(random.nextInt(2_000_000));
		for (int i = 0; i < keys.size(); i++) {
			this.inside.get(keys.get(i)).compareAndSet(held.get(i), null);
		}
		try {
			lease.release();
			count((size == 1) ? "plain held" : "multi held");
		}
		catch (LeaseLostException ex) {
			held.forEach((holding) -> holding.lost = true);
			count("lost, told");
		}
		catch (LockBackendException ex) {
			count("store failed at release");
		}
		catch (RuntimeException ex) {
			this.errors.add("release: " + ex);
		}
	}

	/**
	 * Whether every key comes free within {@code wait} of the store answering again (its
	 * clients may take a while to reconnect after a restart); asks for at most a minute.
	 */
	private boolean allFreeWithin(Duration wait) {
		List<String> all = keys();
		long giveUp = System.nanoTime() + Duration.ofMinutes(1).toNanos();
		long answered = 0;
		while (System.nanoTime() - giveUp < 0) {
			try {
				var lease = this.templates.get(0)
					.tryAcquireAll(all, LockOptions.builder().waitTime(Duration.ofMillis(200)).build());
				if (lease.isPresent()) {
					lease.get().release();
					return true;
				}
				answered = (answered != 0) ? answered : System.nanoTime();
				if (System.nanoTime() - answered - wait.toNanos() > 0) {
					return false;
				}
			}
			catch (RuntimeException ex) {
				// the store is not answering yet: ask again
			}
		}
		return false;
	}

	/** The lock keys the workload uses, for faults that target keys. */
	public List<String> keys() {
		List<String> keys = new ArrayList<>(KEYS);
		for (int k = 0; k < KEYS; k++) {
			keys.add(this.prefix + k);
		}
		return keys;
	}

	private void count(String outcome) {
		this.outcomes.computeIfAbsent(outcome, (k) -> new AtomicLong()).incrementAndGet();
	}

	/** Closes the templates and their schedulers (not the providers). */
	public void close() {
		this.templates.forEach(DefaultLockTemplate::close);
		this.schedulers.forEach(RenewalScheduler::close);
	}

	/** One holder inside a key. */
	private static final class Holding {

		final long token;

		volatile boolean lost;

		Holding(long token) {
			this.token = token;
		}

	}

	/**
	 * What one run saw.
	 *
	 * @param fault the fault's name
	 * @param outcomes operations by outcome
	 * @param overlaps times a key was entered while another holder was inside
	 * @param unsignalledOverlaps overlaps whose older holder was never told of a loss:
	 * must be 0
	 * @param freedAfterRun whether every key came free within a lease after the run: must
	 * be true
	 * @param errors unexpected exceptions: must be none
	 */
	public record Report(String fault, Map<String, Long> outcomes, long overlaps, long unsignalledOverlaps,
			boolean freedAfterRun, List<String> errors) {

		/** Fails, saying what broke, unless every check held and some locks were held. */
		public void assertPassed() {
			long held = this.outcomes.getOrDefault("multi held", 0L);
			if (this.unsignalledOverlaps != 0 || !this.freedAfterRun || !this.errors.isEmpty() || held == 0) {
				throw new AssertionError("Multi-key lock check failed under fault '" + this.fault + "': " + this);
			}
		}

	}

}
