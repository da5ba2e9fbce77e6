package dev.distlock;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

import org.jspecify.annotations.Nullable;

/**
 * A {@link Lock} view of one distributed lock key, for code written against
 * {@code java.util.concurrent.locks}: each {@code lock}/{@code tryLock} acquires the key
 * through a {@link LockTemplate} (across threads and JVMs sharing its store), and
 * {@link #unlock()} releases it.
 *
 * <ul>
 * <li><b>Ownership is per thread</b>, as with
 * {@link java.util.concurrent.locks.ReentrantLock}: the thread that locked is the one
 * that unlocks; {@link #unlock()} on any other thread throws
 * {@link IllegalMonitorStateException}.</li>
 * <li><b>Re-entrant</b>: the holding thread may lock again (through this view, another
 * view of the key, {@code @DistributedLock} or the template), and the key is free after
 * as many unlocks as locks. Each held level is a {@link LockContext} scope, so
 * {@link LockContext#current()} and {@link #lease()} give the lease and its fencing
 * token.</li>
 * <li><b>Leases</b> follow the options given (by default the configured lease time and
 * auto-renew). If the lease is lost while held, re-locking on the holding thread throws
 * {@link LeaseLostException}, and so does the last {@link #unlock()}: a loss is never
 * silent.</li>
 * <li>{@link #lock()} waits until the lock is taken, setting interrupts aside and
 * restoring the interrupt flag afterwards; {@link #lockInterruptibly()} and
 * {@link #tryLock(long, TimeUnit)} stop with {@link InterruptedException}. A store that
 * fails throws {@link LockBackendException} from any of them.</li>
 * <li><b>Unsupported</b>: {@link #newCondition()} throws
 * {@link UnsupportedOperationException}; a distributed lock has no monitor to wait
 * on.</li>
 * </ul>
 */
public final class KeyLock implements Lock {

	/** How long one wait of {@link #lock()} lasts before it starts again. */
	private static final Duration UNBOUNDED_WAIT_STEP = Duration.ofDays(1);

	private final LockTemplate template;

	private final String key;

	private final LockOptions options;

	private volatile @Nullable Thread owner;

	/** The levels held by the owner, innermost last; touched only by the owner. */
	private final Deque<Level> levels = new ArrayDeque<>();

	private KeyLock(LockTemplate template, String key, LockOptions options) {
		if (key.isBlank()) {
			throw new IllegalArgumentException("A lock key must not be blank");
		}
		this.template = template;
		this.key = key;
		this.options = options;
	}

	/** A view of {@code key} with the configured lease time and auto-renew. */
	public static KeyLock of(LockTemplate template, String key) {
		return of(template, key, LockOptions.defaults());
	}

	/**
	 * A view of {@code key} whose acquisitions use {@code options} (its wait time is
	 * replaced by the wait of each call).
	 */
	public static KeyLock of(LockTemplate template, String key, LockOptions options) {
		return new KeyLock(template, key, options);
	}

	/** The key this view locks. */
	public String key() {
		return this.key;
	}

	/** Whether the current thread holds this lock through this view. */
	public boolean isHeldByCurrentThread() {
		return this.owner == Thread.currentThread();
	}

	/** The innermost lease the current thread holds through this view, if any. */
	public Optional<Lease> lease() {
		return isHeldByCurrentThread() ? Optional.of(this.levels.getLast().lease()) : Optional.empty();
	}

	/** Takes the lock, waiting as long as it takes; interrupts are set aside. */
	@Override
	public void lock() {
		lock(null);
	}

	/**
	 * As {@link #lock()}, with this acquisition's lease time (how long the lock outlives
	 * a crash of this JVM).
	 */
	public void lock(@Nullable Duration leaseTime) {
		boolean interrupted = false;
		try {
			while (true) {
				try {
					if (acquire(UNBOUNDED_WAIT_STEP, leaseTime)) {
						return;
					}
				}
				catch (InterruptedException ex) {
					interrupted = true;
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	@Override
	public void lockInterruptibly() throws InterruptedException {
		while (!acquire(UNBOUNDED_WAIT_STEP, null)) {
			// one more unbounded step
		}
	}

	/** Takes the lock if it is free now, after one attempt. */
	@Override
	public boolean tryLock() {
		try {
			return acquire(Duration.ZERO, null);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return tryLock(Duration.ofNanos(Math.max(0, unit.toNanos(time))), null);
	}

	/**
	 * As {@link #tryLock(long, TimeUnit)}, with this acquisition's lease time when not
	 * null.
	 */
	public boolean tryLock(Duration waitTime, @Nullable Duration leaseTime) throws InterruptedException {
		return acquire(waitTime, leaseTime);
	}

	/**
	 * Gives back one level of the current thread's hold; the last one releases the key.
	 * @throws IllegalMonitorStateException if the current thread does not hold it
	 * @throws LeaseLostException if the lease had been lost while held
	 */
	@Override
	public void unlock() {
		if (!isHeldByCurrentThread()) {
			throw new IllegalMonitorStateException("The current thread (" + Thread.currentThread().getName()
					+ ") does not hold the distributed lock '" + this.key + "'");
		}
		Level level = this.levels.removeLast();
		if (this.levels.isEmpty()) {
			this.owner = null;
		}
		level.scope().close();
		level.lease().release();
	}

	/** Unsupported: a distributed lock has no monitor to wait on. */
	@Override
	public Condition newCondition() {
		throw new UnsupportedOperationException("Distributed lock '" + this.key
				+ "' has no conditions: a lock held across JVMs has no monitor to wait on and be signalled through");
	}

	private boolean acquire(Duration waitTime, @Nullable Duration leaseTime) throws InterruptedException {
		if (Thread.interrupted()) {
			throw new InterruptedException("Interrupted before locking '" + this.key + "'");
		}
		if (isHeldByCurrentThread() && !this.levels.getLast().lease().isHeld()) {
			throw new LeaseLostException(this.key, "Cannot lock '" + this.key
					+ "' again: this thread's lease of it was lost while held; unlock it to learn of the loss");
		}
		LockOptions.Builder call = LockOptions.builder().waitTime(waitTime);
		if (leaseTime != null) {
			call.leaseTime(leaseTime);
		}
		Optional<Lease> lease;
		try {
			lease = this.template.tryAcquire(this.key, call.build().orElse(this.options));
		}
		catch (LockAcquisitionException ex) {
			if (Thread.interrupted()) {
				InterruptedException interrupted = new InterruptedException(ex.getMessage());
				interrupted.initCause(ex);
				throw interrupted;
			}
			throw ex;
		}
		if (lease.isEmpty()) {
			return false;
		}
		this.levels.addLast(new Level(lease.get(), LockContext.open(lease.get())));
		this.owner = Thread.currentThread();
		return true;
	}

	@Override
	public String toString() {
		Thread holder = this.owner;
		return "KeyLock[" + this.key + ((holder != null) ? ", held by " + holder.getName() : "") + "]";
	}

	private record Level(Lease lease, LockContext.Scope scope) {
	}

}
