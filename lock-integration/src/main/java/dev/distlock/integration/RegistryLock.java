package dev.distlock.integration;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;

import dev.distlock.KeyLock;
import dev.distlock.Lease;

import org.springframework.integration.support.locks.DistributedLock;

/**
 * A lock of a {@link DistlockLockRegistry}: a {@link KeyLock} seen as Spring
 * Integration's {@link DistributedLock}, whose {@code ttl} is the acquisition's lease
 * time (how long the lock outlives a crash of this JVM; with auto-renew it is renewed
 * while held). {@link #newCondition()} is not supported, and {@link #unlock()} by a
 * thread that does not hold the lock throws {@link IllegalMonitorStateException}.
 */
public final class RegistryLock implements DistributedLock {

	private final KeyLock lock;

	RegistryLock(KeyLock lock) {
		this.lock = lock;
	}

	/** The store key this lock takes. */
	public String key() {
		return this.lock.key();
	}

	/**
	 * The lease the current thread holds through this lock, for its fencing token, if it
	 * holds it.
	 */
	public Optional<Lease> lease() {
		return this.lock.lease();
	}

	@Override
	public void lock() {
		this.lock.lock();
	}

	@Override
	public void lock(Duration ttl) {
		this.lock.lock(ttl);
	}

	@Override
	public void lockInterruptibly() throws InterruptedException {
		this.lock.lockInterruptibly();
	}

	@Override
	public boolean tryLock() {
		return this.lock.tryLock();
	}

	@Override
	public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
		return this.lock.tryLock(time, unit);
	}

	@Override
	public boolean tryLock(Duration waitTime, Duration ttl) throws InterruptedException {
		return this.lock.tryLock(waitTime, ttl);
	}

	@Override
	public void unlock() {
		this.lock.unlock();
	}

	/** Unsupported: a distributed lock has no monitor to wait on. */
	@Override
	public Condition newCondition() {
		return this.lock.newCondition();
	}

	@Override
	public String toString() {
		return "RegistryLock[" + this.lock + "]";
	}

}
