package dev.distlock.support;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Jittered exponential backoff between lock attempts: starts at a few milliseconds,
 * doubles up to the retry interval, and draws each pause from the upper half of the
 * current step, so that waiters in different JVMs spread out instead of retrying in
 * lockstep.
 */
final class Backoff {

	private static final long FIRST_STEP_NANOS = 2_000_000;

	private final long maxNanos;

	private long stepNanos;

	Backoff(long maxNanos) {
		this.maxNanos = Math.max(1, maxNanos);
		this.stepNanos = Math.min(FIRST_STEP_NANOS, this.maxNanos);
	}

	long nextPauseNanos() {
		long step = this.stepNanos;
		this.stepNanos = Math.min(this.maxNanos, step * 2);
		long half = step / 2;
		return half + ThreadLocalRandom.current().nextLong(half + 1);
	}

}
