package dev.distlock.support.handover;

import java.time.Duration;

import dev.distlock.spi.LockKind;

/**
 * What a holder took a lock with, or a waiter asks for, as far as hand-over cares: the
 * store lease carries over as it is, so the next holder must want the same.
 */
public interface HandoverTerms {

	LockKind kind();

	boolean fair();

	Duration leaseTime();

	boolean autoRenew();

	Duration retryInterval();

}
