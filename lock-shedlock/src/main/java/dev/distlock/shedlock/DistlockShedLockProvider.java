package dev.distlock.shedlock;

import java.util.Optional;

import dev.distlock.LockContext;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;

/**
 * A ShedLock {@link net.javacrumbs.shedlock.core.LockProvider} on any distlock store
 * ({@link LockProvider}): {@code @SchedulerLock} jobs and ShedLock's
 * {@code LockingTaskExecutor} take their locks from the store that
 * {@code @DistributedLock} uses, with its fencing tokens and its owner checks.
 *
 * <p>
 * It keeps ShedLock's semantics, not distlock's:
 * <ul>
 * <li>{@link #lock} makes one attempt ({@link LockProvider#tryLock}) and never waits; the
 * lock is not re-entrant (a second {@code lock} of a held name is refused, even on the
 * same thread) and not renewed: it expires {@code lockAtMostFor} after it was taken,
 * unless {@linkplain SimpleLock#extend extended}.</li>
 * <li>{@link SimpleLock#unlock()} shortens the lease to what is left of
 * {@code lockAtLeastFor} (an owner-checked renewal), or releases the lock when nothing is
 * left.</li>
 * <li>{@link SimpleLock#extend} renews the same acquisition to the new
 * {@code lockAtMostFor}; the old handle is then invalid. A lock that already expired
 * cannot be extended.</li>
 * </ul>
 * What distlock adds:
 * <ul>
 * <li>While the job runs, {@link LockContext#current()} on its thread returns the lock as
 * a {@link dev.distlock.Lease}: its {@linkplain dev.distlock.Lease#fencingToken() fencing
 * token} rises with every acquisition of the name, and
 * {@link dev.distlock.Lease#isHeld()} turns false once {@code lockAtMostFor} (less a
 * margin for clock drift) has passed since the lock was requested. The lease's own
 * {@code release()} is refused: ShedLock releases the lock when the job returns.</li>
 * <li>A lock lost while held (the job outran {@code lockAtMostFor} and the lock expired,
 * or another node took it) is never silent: {@code unlock()} throws
 * {@link dev.distlock.LeaseLostException}, which reaches the scheduler's error handler.
 * Every store operation checks the owner, so a late {@code unlock()} never frees another
 * node's lock.</li>
 * </ul>
 * Lock names are store keys as they are, behind an optional prefix. With no prefix (the
 * default) {@code @SchedulerLock(name = "report")} and
 * {@code @DistributedLock(key = "'report'")} exclude each other, which lets a job move
 * from one annotation to the other while nodes with either version run.
 */
public final class DistlockShedLockProvider implements ExtensibleLockProvider {

	private final LockProvider store;

	private final String keyPrefix;

	/** A provider whose lock names are the store's keys as they are. */
	public DistlockShedLockProvider(LockProvider store) {
		this(store, "");
	}

	/**
	 * A provider whose lock names are prefixed with {@code keyPrefix} in the store, to
	 * keep them apart from {@code @DistributedLock} keys.
	 */
	public DistlockShedLockProvider(LockProvider store, String keyPrefix) {
		this.store = store;
		this.keyPrefix = keyPrefix;
	}

	@Override
	public Optional<SimpleLock> lock(LockConfiguration configuration) {
		long sentNanos = System.nanoTime();
		LockAttempt attempt = LockAttempt.join(this.store.tryLock(
				LockRequest.exclusive(this.keyPrefix + configuration.getName(), configuration.getLockAtMostFor())));
		if (!(attempt instanceof LockAttempt.Acquired acquired)) {
			return Optional.empty();
		}
		ShedLockLease lease = new ShedLockLease(configuration.getName(), acquired.handle());
		lease.heldUntil(sentNanos, configuration.getLockAtMostFor());
		lease.openScope();
		return Optional.of(new DistlockSimpleLock(lease, configuration));
	}

	@Override
	public String toString() {
		return "DistlockShedLockProvider[store=" + this.store.storeName() + ", keyPrefix='" + this.keyPrefix + "']";
	}

}
