package dev.distlock.spi;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One attempt at a lock, as {@link LockProvider#tryLock(LockRequest)} receives it:
 * everything the store needs to take it, so that one operation serves every kind of hold.
 * The machinery builds one per acquisition, and after each busy attempt the next with
 * {@link #afterAttempt(boolean)}.
 *
 * @param keys the key, or for {@link LockKind#MULTI} the keys, distinct and sorted, as
 * the user gave them
 * @param kind the kind of hold asked for
 * @param leaseTime how long the store keeps the hold unless it is renewed
 * @param waiting whether the caller will wait if the lock is busy, so that its release
 * must be signalled (a store may mark the key for that)
 * @param waiterId the waiter across attempts: a fair waiter's place in the queue, or a
 * waiting writer's intent on a store with read locks; null for any other caller
 * @param permits the semaphore's permit count for {@link LockKind#PERMITS}, else 0
 * @param tokens how many fencing tokens the attempt reserves for local hand-over
 * ({@link LocalHandover}); 1, the attempt's own token, for no hand-over
 * @param queueTimeout how long the store keeps the waiter's place (fair) or intent
 * (writer) after this attempt, so that a waiter that dies leaves by itself; zero without
 * a waiter id
 * @param intentRecorded whether an earlier attempt of this writer found the key busy, and
 * so may have recorded an intent the store must end when the writer takes the key
 */
public record LockRequest(List<String> keys, LockKind kind, Duration leaseTime, boolean waiting,
		@Nullable String waiterId, int permits, int tokens, Duration queueTimeout, boolean intentRecorded) {

	public LockRequest {
		keys = List.copyOf(keys);
		Objects.requireNonNull(kind, "kind");
		Objects.requireNonNull(leaseTime, "leaseTime");
		Objects.requireNonNull(queueTimeout, "queueTimeout");
		checkKeys(keys, kind);
		if ((kind == LockKind.PERMITS) != (permits > 0) || permits < 0) {
			throw new IllegalArgumentException("permits must be positive for a semaphore, and 0 for any other kind,"
					+ " but was " + permits + " for " + kind);
		}
		if (tokens < 1 || (tokens > 1 && kind != LockKind.EXCLUSIVE)) {
			throw new IllegalArgumentException("A token block holds at least one token, and more only for an"
					+ " exclusive lock, but was " + tokens + " for " + kind);
		}
		boolean waiterKind = kind == LockKind.FAIR || kind == LockKind.EXCLUSIVE;
		if ((kind == LockKind.FAIR && waiterId == null) || (waiterId != null && !waiterKind)) {
			throw new IllegalArgumentException("A waiter id is needed for a fair lock, and allowed for an exclusive"
					+ " one only, but was " + waiterId + " for " + kind);
		}
		if (intentRecorded && (waiterId == null || kind != LockKind.EXCLUSIVE)) {
			throw new IllegalArgumentException("Only a waiting writer records an intent");
		}
	}

	private static void checkKeys(List<String> keys, LockKind kind) {
		if (keys.isEmpty() || (kind != LockKind.MULTI && keys.size() != 1)) {
			throw new IllegalArgumentException(kind + " takes "
					+ ((kind == LockKind.MULTI) ? "at least one key" : "one key") + " but got " + keys);
		}
		for (int i = 1; i < keys.size(); i++) {
			if (keys.get(i - 1).compareTo(keys.get(i)) >= 0) {
				throw new IllegalArgumentException("The keys of a multi-key lock must be distinct and sorted: " + keys);
			}
		}
	}

	/** An exclusive lock on {@code key}, for a caller that does not wait. */
	public static LockRequest exclusive(String key, Duration leaseTime) {
		return new LockRequest(List.of(key), LockKind.EXCLUSIVE, leaseTime, false, null, 0, 1, Duration.ZERO, false);
	}

	/**
	 * A fair lock on {@code key} for waiter {@code waiterId}, whose place is kept for
	 * {@code queueTimeout} after the attempt.
	 */
	public static LockRequest fair(String key, Duration leaseTime, String waiterId, Duration queueTimeout) {
		return new LockRequest(List.of(key), LockKind.FAIR, leaseTime, false, waiterId, 0, 1, queueTimeout, false);
	}

	/** A read hold on {@code key}, for a caller that does not wait. */
	public static LockRequest shared(String key, Duration leaseTime) {
		return new LockRequest(List.of(key), LockKind.SHARED, leaseTime, false, null, 0, 1, Duration.ZERO, false);
	}

	/**
	 * One permit of the semaphore {@code key} of {@code permits} permits, for a caller
	 * that does not wait.
	 */
	public static LockRequest permit(String key, int permits, Duration leaseTime) {
		return new LockRequest(List.of(key), LockKind.PERMITS, leaseTime, false, null, permits, 1, Duration.ZERO,
				false);
	}

	/** Every one of {@code keys} (distinct, sorted), for a caller that does not wait. */
	public static LockRequest all(List<String> keys, Duration leaseTime) {
		return new LockRequest(keys, LockKind.MULTI, leaseTime, false, null, 0, 1, Duration.ZERO, false);
	}

	/**
	 * The key of a single-key request; the first key of a {@link LockKind#MULTI} one.
	 */
	public String key() {
		return this.keys.get(0);
	}

	/** This request, for a caller that will wait ({@code true}) or not. */
	public LockRequest withWaiting(boolean waiting) {
		return new LockRequest(this.keys, this.kind, this.leaseTime, waiting, this.waiterId, this.permits, this.tokens,
				this.queueTimeout, this.intentRecorded);
	}

	/** This request, reserving a block of {@code tokens} fencing tokens. */
	public LockRequest withTokens(int tokens) {
		return new LockRequest(this.keys, this.kind, this.leaseTime, this.waiting, this.waiterId, this.permits, tokens,
				this.queueTimeout, this.intentRecorded);
	}

	/**
	 * This exclusive request as waiting writer {@code waiterId}'s, whose busy attempts
	 * behind readers record an intent kept for {@code intentTimeout}.
	 */
	public LockRequest withWriter(String waiterId, Duration intentTimeout) {
		return new LockRequest(this.keys, this.kind, this.leaseTime, true, waiterId, this.permits, this.tokens,
				intentTimeout, false);
	}

	/** This writer's request, saying whether an intent may be recorded. */
	public LockRequest withIntentRecorded(boolean intentRecorded) {
		return new LockRequest(this.keys, this.kind, this.leaseTime, this.waiting, this.waiterId, this.permits,
				this.tokens, this.queueTimeout, intentRecorded);
	}

	/** Whether this is a waiting writer's request (an exclusive one with a waiter id). */
	public boolean writer() {
		return this.kind == LockKind.EXCLUSIVE && this.waiterId != null;
	}

	/**
	 * The request of the next attempt after this one was answered: a writer's later
	 * attempts take a single token, and say whether the attempt just made found the key
	 * busy (and so recorded an intent). Anyone else asks the same again. A lock a writer
	 * takes after waiting thus goes back to the store at its first release, so that
	 * waiters of other JVMs get their turn: a block there took a hot key from the other
	 * JVMs' writers.
	 * @param busy whether the attempt just made found the key busy
	 */
	public LockRequest afterAttempt(boolean busy) {
		if (!writer() || (this.tokens == 1 && this.intentRecorded == busy)) {
			return this;
		}
		return new LockRequest(this.keys, this.kind, this.leaseTime, this.waiting, this.waiterId, this.permits, 1,
				this.queueTimeout, busy);
	}

	/**
	 * Whether the waiter may hold something in the store between attempts that it must
	 * give up when it stops waiting ({@link LockProvider#withdraw}): a fair waiter's
	 * place in the queue, or a writer's intent once an attempt found the key busy.
	 */
	public boolean keepsPlace() {
		return this.kind == LockKind.FAIR || this.intentRecorded;
	}

	@Override
	public String toString() {
		return this.kind + " " + ((this.kind == LockKind.MULTI) ? this.keys : "'" + key() + "'") + " for "
				+ this.leaseTime + (this.waiting ? ", waiting" : "")
				+ ((this.waiterId != null) ? " as " + this.waiterId : "")
				+ ((this.permits > 0) ? ", " + this.permits + " permits" : "")
				+ ((this.tokens > 1) ? ", " + this.tokens + " tokens" : "");
	}

}
