package dev.distlock.harness.fault;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.fault.Op.Outcome;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;

/**
 * The workload of a fault run, alike in every JVM: threads that lock one of a few keys,
 * enter the {@link FencedResource} with the lease's token, pause, write the value read
 * plus one, leave and release; each operation is recorded as an {@link Op}. The threads
 * run until the end time and never stop on an error, so a fault shows in the outcomes.
 * Locks are taken through a {@link DefaultLockTemplate} over the provider a
 * {@link ProviderFactory} makes, with auto-renew, a wait of two leases, and, with
 * {@code fair}, every acquisition queued in the store ({@code fair(true)}).
 */
public final class Workload implements AutoCloseable {

	/**
	 * How many lock keys the threads share ({@code distlock.faults.keys}, 3 by default).
	 */
	public static final int KEYS = Integer.getInteger("distlock.faults.keys", 3);

	/** How long a provider may take to answer its first call. */
	private static final Duration WARM_UP = Duration.ofSeconds(30);

	private final RenewalScheduler scheduler = new RenewalScheduler();

	private final ProviderFactory store;

	private final LockProvider provider;

	private final DefaultLockTemplate template;

	/** Whether this run hands locks over locally ({@link FaultRun#HANDOVER}). */
	private final boolean handover;

	private final FencedResource resource;

	private final LockOptions options;

	private final int jvm;

	private final Set<Long> lostTokens = ConcurrentHashMap.newKeySet();

	private final List<Op> ops = Collections.synchronizedList(new ArrayList<>());

	private final ConcurrentMap<String, AtomicLong> errors = new ConcurrentHashMap<>();

	private final ConcurrentMap<String, AtomicLong> backendErrors = new ConcurrentHashMap<>();

	private final List<Thread> threads = new ArrayList<>();

	/**
	 * A workload over the provider {@code store} creates from {@code settings}, once it
	 * answers ({@link ProviderFactory#awaitAnswers}); closing the workload closes
	 * {@code store}.
	 * @param jvm the number recorded in each {@link Op}: 0 in the test JVM
	 */
	public Workload(int jvm, ProviderFactory store, Map<String, String> settings, FencedResource resource,
			Duration lease, boolean fair) {
		this.jvm = jvm;
		this.resource = resource;
		this.store = store;
		this.provider = store.create(settings);
		ProviderFactory.awaitAnswers(this.provider, WARM_UP);
		this.options = LockOptions.builder()
			.waitTime(waitTime(lease))
			.leaseTime(lease)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(50))
			.fair(fair)
			.build();
		LeaseLossListener listener = (lease1, reason, holder) -> this.lostTokens.add(lease1.fencingToken());
		this.handover = Boolean.parseBoolean(settings.get(FaultRun.HANDOVER));
		this.template = new DefaultLockTemplate(this.provider, this.scheduler, this.options, listener, false,
				LockObserver.NONE, this.handover ? HandoverSettings.ON : HandoverSettings.OFF);
	}

	/** How long an acquire waits for a busy lock: two leases. */
	public static Duration waitTime(Duration lease) {
		return lease.multipliedBy(2);
	}

	/** The lock key of index {@code index}, and the resource's key for it. */
	public static String key(int index) {
		return "fault:" + index;
	}

	/**
	 * The longest one call of the provider may keep a caller
	 * ({@link LockProvider#callTimeout()}).
	 */
	public Duration storeTimeout() {
		return this.provider.callTimeout();
	}

	/** Starts {@code count} threads that work until {@code endNanos}. */
	public void start(int count, long endNanos, long seed) {
		for (int i = 0; i < count; i++) {
			Random random = new Random(seed * 31 + i);
			Thread thread = new Thread(() -> {
				while (System.nanoTime() - endNanos < 0) {
					this.ops.add(once(random));
					Thread.interrupted();
				}
			}, "fault-worker-" + this.jvm + "-" + i);
			this.threads.add(thread);
			thread.start();
		}
	}

	/** The worker threads, for faults that interrupt them. */
	public List<Thread> threads() {
		return this.threads;
	}

	/** Waits for the threads to finish; an error naming a thread that did not. */
	public void join(Duration timeout) throws InterruptedException {
		join(this.threads, timeout);
	}

	/**
	 * Waits for {@code threads} to finish within {@code timeout}; an error naming a
	 * thread that did not, with its stack.
	 */
	static void join(List<Thread> threads, Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		for (Thread thread : threads) {
			thread.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
			if (thread.isAlive()) {
				throw new IllegalStateException(thread.getName() + " did not finish: "
						+ List.of(thread.getStackTrace()).subList(0, Math.min(12, thread.getStackTrace().length)));
			}
		}
	}

	/**
	 * Locks this JVM passed between its threads without a store call, or -1 where it
	 * never can: hand-over off ({@link FaultRun#HANDOVER}), a store without
	 * {@link LocalHandover}, or fair locks.
	 */
	public long localHandovers() {
		return (this.handover && this.provider instanceof LocalHandover && !Boolean.TRUE.equals(this.options.fair()))
				? this.template.localHandovers() : -1;
	}

	/** The operations recorded so far. */
	public List<Op> ops() {
		synchronized (this.ops) {
			return List.copyOf(this.ops);
		}
	}

	/** Unexpected exceptions by message: a bug in the library or the harness. */
	public Map<String, AtomicLong> errors() {
		return this.errors;
	}

	/**
	 * What this JVM still holds after its threads finished: held locks, waiting keys,
	 * renewals and deadline checks pending, and what the provider holds
	 * ({@link ProviderFactory#leftOver()}). All 0 when nothing leaked.
	 */
	public Leaks leaks() {
		return new Leaks(this.template.heldLocks(), this.template.queuedKeys(), this.scheduler.pendingTasks(),
				this.scheduler.pendingDeadlineChecks(), this.store.leftOver());
	}

	private Op once(Random random) {
		int keyIndex = random.nextInt(KEYS);
		String key = key(keyIndex);
		long started = System.nanoTime();
		Lease lease;
		try {
			lease = this.template.acquire(key, this.options);
		}
		catch (LockAcquisitionException ex) {
			Outcome outcome = Thread.currentThread().isInterrupted() || ex.getMessage().contains("Interrupted")
					? Outcome.INTERRUPTED : Outcome.TIMEOUT;
			return notAcquired(keyIndex, started, outcome);
		}
		catch (LockBackendException ex) {
			Op op = notAcquired(keyIndex, started, Outcome.BACKEND);
			note("acquire", ex);
			return op;
		}
		catch (RuntimeException ex) {
			Op op = notAcquired(keyIndex, started, Outcome.ERROR);
			error(ex);
			return op;
		}
		long acquired = System.nanoTime();
		long token = lease.fencingToken();
		long entered = 0;
		long occupancy = 0;
		long writeSent = 0;
		int written = -1;
		int fencedOut = 0;
		Outcome outcome = Outcome.OK;
		boolean inside = false;
		// An interrupt is for the lock library (waiting, renewing, releasing): the
		// resource's own client is shielded from it, and the holder stops its work.
		boolean interrupted = Thread.interrupted();
		try {
			if (!interrupted) {
				FencedResource.Entry entry = this.resource.enter(key, token);
				inside = true;
				entered = System.nanoTime();
				occupancy = entry.occupancy();
				if (!entry.admitted()) {
					outcome = Outcome.REFUSED;
					fencedOut = 1;
				}
				else {
					work(random);
					interrupted = Thread.interrupted();
					if (!interrupted) {
						writeSent = System.nanoTime();
						written = this.resource.write(key, token, entry.value() + 1) ? 1 : 0;
						if (written == 0) {
							outcome = Outcome.REJECTED;
							fencedOut = 2;
						}
					}
				}
			}
		}
		catch (RuntimeException ex) {
			error(ex);
			outcome = Outcome.ERROR;
		}
		finally {
			interrupted |= Thread.interrupted();
			if (inside) {
				this.resource.exit(key);
			}
		}
		if (interrupted) {
			outcome = Outcome.INTERRUPTED;
			Thread.currentThread().interrupt();
		}
		long releasing = System.nanoTime();
		boolean lossSignalled = false;
		try {
			lease.release();
		}
		catch (LeaseLostException ex) {
			outcome = Outcome.LOST;
			lossSignalled = true;
		}
		catch (LockBackendException ex) {
			note("release", ex);
			outcome = Outcome.BACKEND;
		}
		catch (RuntimeException ex) {
			error(ex);
			outcome = Outcome.ERROR;
		}
		long ended = System.nanoTime();
		lossSignalled |= this.lostTokens.contains(token);
		return new Op(this.jvm, keyIndex, token, started, acquired, entered, occupancy, writeSent, written, releasing,
				fencedOut, outcome, lossSignalled, ended);
	}

	/** An acquire that failed just now. */
	private Op notAcquired(int keyIndex, long started, Outcome outcome) {
		return new Op(this.jvm, keyIndex, 0, started, 0, 0, 0, 0, -1, 0, 0, outcome, false, System.nanoTime());
	}

	/** The work under the lock: a short pause between read and write. */
	private static void work(Random random) {
		LockSupport.parkNanos(random.nextInt(2_000_000));
	}

	/** Backend errors are expected under faults; a sample of each kind is kept. */
	private void note(String step, RuntimeException ex) {
		Throwable root = ex;
		while (root.getCause() != null && root.getCause() != root) {
			root = root.getCause();
		}
		String message = ex.getMessage() + " (" + root.getClass().getSimpleName() + ")";
		this.backendErrors
			.computeIfAbsent(step + ": " + message.substring(0, Math.min(120, message.length())),
					(k) -> new AtomicLong())
			.incrementAndGet();
	}

	/** Store failures by message: expected under faults, kept as a sample. */
	public Map<String, AtomicLong> backendErrors() {
		return this.backendErrors;
	}

	private void error(RuntimeException ex) {
		this.errors.computeIfAbsent(ex.getClass().getSimpleName() + ": " + ex.getMessage(), (k) -> new AtomicLong())
			.incrementAndGet();
	}

	@Override
	public void close() {
		this.template.close();
		this.scheduler.close();
		this.store.close();
	}

	/**
	 * What one JVM left behind; see {@link Workload#leaks()}.
	 *
	 * @param heldLocks locks the template still holds
	 * @param waitingKeys keys with a local wait queue
	 * @param renewals renewals still scheduled
	 * @param deadlineChecks lease deadline checks still scheduled
	 * @param providerLeftOver what the provider holds
	 * ({@link ProviderFactory#leftOver()})
	 */
	public record Leaks(int heldLocks, int waitingKeys, int renewals, int deadlineChecks, int providerLeftOver) {

		/** Everything left, added up. */
		public int total() {
			return this.heldLocks + this.waitingKeys + this.renewals + this.deadlineChecks + this.providerLeftOver;
		}

		/** The leaks as one line of text, for {@link #parse}. */
		public String line() {
			return "LEAKS " + this.heldLocks + " " + this.waitingKeys + " " + this.renewals + " " + this.deadlineChecks
					+ " " + this.providerLeftOver;
		}

		/** Reads a {@link #line()} back. */
		public static Leaks parse(String line) {
			String[] f = line.substring("LEAKS ".length()).split(" ");
			return new Leaks(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]),
					Integer.parseInt(f[3]), Integer.parseInt(f[4]));
		}

	}

}
