package dev.distlock.support;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.handover.Handover;

/**
 * Builds the one {@link LockRequest} of an acquisition from its settings: the kind, the
 * waiter's identity where the store keeps a place for it, and the token block where the
 * lock may be handed over in this JVM.
 */
final class LockRequests {

	private static final String WAITER_PREFIX = UUID.randomUUID() + ":";

	private static final AtomicLong WAITER_SEQUENCE = new AtomicLong();

	private static final Duration MIN_QUEUE_TIMEOUT = Duration.ofSeconds(1);

	private final Handover<ManagedLease> handover;

	/** Whether the store has read locks, whose waiting writers record an intent. */
	private final boolean readLocks;

	LockRequests(LockProvider provider, Handover<ManagedLease> handover) {
		this.handover = handover;
		this.readLocks = provider.kinds().contains(LockKind.SHARED);
	}

	/**
	 * The request of an acquisition of {@code key}. A plain waiter on a store with read
	 * locks goes as a writer, whose busy attempts record its intent, so that new readers
	 * stop coming in: readers that kept overlapping would never leave a release to
	 * signal. With local hand-over, the first attempt reserves a token block (and, for a
	 * writer behind readers, records the intent in the same call); see
	 * {@link LockRequest#afterAttempt} for the attempts after it.
	 */
	LockRequest of(String key, LockSettings settings) {
		LockKind kind = settings.kind();
		boolean waiting = !settings.waitTime().isZero();
		boolean writer = waiting && this.readLocks && kind == LockKind.EXCLUSIVE;
		String waiterId = (kind == LockKind.FAIR || writer) ? newWaiterId() : null;
		Duration queueTimeout = (waiterId != null) ? queueTimeout(settings) : Duration.ZERO;
		return new LockRequest(List.of(key), kind, settings.leaseTime(), waiting, waiterId, settings.permits(),
				this.handover.tokens(kind), queueTimeout, false);
	}

	/**
	 * A fair waiter attempts at least once per retry interval, each attempt keeping its
	 * place (or a writer's intent) for this long; a waiter that dies is out of the queue
	 * after it.
	 */
	private static Duration queueTimeout(LockSettings settings) {
		Duration threeRetries = settings.retryInterval().multipliedBy(3);
		return (threeRetries.compareTo(MIN_QUEUE_TIMEOUT) < 0) ? MIN_QUEUE_TIMEOUT : threeRetries;
	}

	/**
	 * A waiter's id, unique across JVMs: this JVM's random prefix and a counter, so that
	 * no acquire takes a lock on the JVM's shared {@code SecureRandom}.
	 */
	private static String newWaiterId() {
		return WAITER_PREFIX + Long.toString(WAITER_SEQUENCE.incrementAndGet(), 36);
	}

}
