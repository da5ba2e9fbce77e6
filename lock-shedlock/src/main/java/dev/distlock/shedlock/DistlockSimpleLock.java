package dev.distlock.shedlock;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.LeaseLostException;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * ShedLock's handle of one acquisition (or of one extension of it). Valid once: after
 * {@link #unlock()} or {@link #extend} every further call throws
 * {@link IllegalStateException}, as ShedLock's own providers do.
 */
final class DistlockSimpleLock implements SimpleLock {

	/**
	 * A lease shorter than this cannot be set in the store; the lock is released instead.
	 */
	private static final Duration SHORTEST_LEASE = Duration.ofMillis(1);

	private final ShedLockLease lease;

	private final LockConfiguration configuration;

	private final AtomicBoolean valid = new AtomicBoolean(true);

	DistlockSimpleLock(ShedLockLease lease, LockConfiguration configuration) {
		this.lease = lease;
		this.configuration = configuration;
	}

	/**
	 * Keeps the lock for what is left of {@code lockAtLeastFor}, or releases it.
	 * @throws LeaseLostException if the lock was no longer this acquisition's: it had
	 * expired after {@code lockAtMostFor}, or another owner had taken it
	 * @throws IllegalStateException if this handle was already unlocked or extended
	 */
	@Override
	public void unlock() {
		invalidate();
		this.lease.end();
		Duration keep = Duration.between(ClockProvider.now(), this.configuration.getLockAtLeastUntil());
		boolean owned = (keep.compareTo(SHORTEST_LEASE) >= 0) ? this.lease.handle().renew(keep)
				: this.lease.handle().release();
		if (!owned) {
			throw new LeaseLostException(this.lease.key(),
					"The ShedLock lock '" + this.lease.key()
							+ "' was lost before the job finished: it expired after lockAtMostFor ("
							+ this.configuration.getLockAtMostFor()
							+ ") or another owner took it, so the job may have run on two nodes at once");
		}
	}

	/**
	 * Renews this acquisition to {@code lockAtMostFor} from now.
	 * @return the new handle, or empty if the lock had expired or was taken over (the
	 * lease then ends)
	 * @throws IllegalStateException if this handle was already unlocked or extended
	 */
	@Override
	public Optional<SimpleLock> extend(Duration lockAtMostFor, Duration lockAtLeastFor) {
		invalidate();
		LockConfiguration extended = new LockConfiguration(ClockProvider.now(), this.configuration.getName(),
				lockAtMostFor, lockAtLeastFor);
		long sentNanos = System.nanoTime();
		if (!this.lease.isHeld() || !this.lease.handle().renew(lockAtMostFor)) {
			this.lease.end();
			return Optional.empty();
		}
		this.lease.heldUntil(sentNanos, lockAtMostFor);
		return Optional.of(new DistlockSimpleLock(this.lease, extended));
	}

	private void invalidate() {
		if (!this.valid.compareAndSet(true, false)) {
			throw new IllegalStateException("The lock '" + this.configuration.getName()
					+ "' is no longer valid: it was already unlocked or extended");
		}
	}

}
