package dev.distlock.redis;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The fair waits of one provider, and the locks granted to them on release. A fair lock's
 * release hands the lock to the first queued waiter in Redis
 * ({@link LockScripts#FAIR_RELEASE}) and publishes
 * {@code <lock key>\n<waiter id> <token>}; the waiter's provider records the grant here
 * before waking the waiter, whose next attempt then holds the lock without a round trip.
 *
 * <p>
 * Each wait keeps one owner token for all its attempts, so that a grant whose message was
 * lost is still found as the waiter's own by its next attempt (the acquire script answers
 * an owner's own lock with its token). A grant is used only while it is fresh (received
 * less than half a lease ago); an older one is checked with Redis, so a waiter that was
 * paused between the grant and its next attempt does not take a lease that may have run
 * out.
 */
final class FairGrants {

	private final ConcurrentMap<String, Wait> waits = new ConcurrentHashMap<>();

	/** One fair wait: its lock, its owner token and the grant it received, if any. */
	static final class Wait {

		final String lockKey;

		final String owner;

		private volatile long token;

		private volatile long claimNanos;

		private volatile long receivedNanos;

		Wait(String lockKey, String owner) {
			this.lockKey = lockKey;
			this.owner = owner;
		}

		/**
		 * The granted token if the grant came less than {@code freshNanos} ago and less
		 * than half its claim ago, else 0.
		 */
		long freshToken(long freshNanos) {
			long granted = this.token;
			long age = System.nanoTime() - this.receivedNanos;
			return (granted > 0 && age < freshNanos && age < this.claimNanos / 2) ? granted : 0;
		}

	}

	/**
	 * The wait of {@code waiterId}, started with a new owner token on its first attempt.
	 */
	Wait waitFor(String waiterId, String lockKey, Supplier<String> newOwner) {
		return this.waits.computeIfAbsent(waiterId, (id) -> new Wait(lockKey, newOwner.get()));
	}

	/** The wait of {@code waiterId}, or null when none is under way. */
	@Nullable Wait current(String waiterId) {
		return this.waits.get(waiterId);
	}

	/** The wait ended: acquired, or given up. */
	void done(String waiterId) {
		this.waits.remove(waiterId);
	}

	/** Waits under way; 0 when nobody waits for a fair lock. */
	int size() {
		return this.waits.size();
	}

	/**
	 * A release message: the lock key whose waiters to wake, or null when nobody here is
	 * to be woken (a grant to a waiter of another provider). A plain message is the lock
	 * key itself; a grant to one of this provider's waits is recorded first.
	 */
	@Nullable String onMessage(String message) {
		int newline = message.lastIndexOf('\n');
		if (newline <= 0) {
			return message;
		}
		String[] grant = message.substring(newline + 1).split(" ");
		long token;
		long claimMillis;
		try {
			token = Long.parseLong(grant[1]);
			claimMillis = Long.parseLong(grant[2]);
		}
		catch (RuntimeException ex) {
			return message;
		}
		String lockKey = message.substring(0, newline);
		Wait wait = this.waits.get(grant[0]);
		if (wait == null || !wait.lockKey.equals(lockKey)) {
			return null;
		}
		wait.receivedNanos = System.nanoTime();
		wait.claimNanos = TimeUnit.MILLISECONDS.toNanos(claimMillis);
		wait.token = token;
		return lockKey;
	}

}
