package dev.distlock.autoconfigure.observation;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What an observation of one lock acquisition or one hold knows: the key (per-call data,
 * only ever a high-cardinality value), the lock's name, fairness, the fencing token once
 * acquired, and the outcome once ended.
 */
public final class LockObservationContext extends Observation.Context {

	/** Which of the two observations this context belongs to. */
	public enum Kind {

		/** From the call to acquire until the lock is acquired or given up. */
		ACQUIRE,

		/** From the acquire until the holder's release. */
		HOLD

	}

	private final Kind kind;

	private final String key;

	private final @Nullable String lockName;

	private final boolean fair;

	private long fencingToken;

	private @Nullable String outcome;

	public LockObservationContext(Kind kind, String key, @Nullable String lockName, boolean fair) {
		this.kind = kind;
		this.key = key;
		this.lockName = lockName;
		this.fair = fair;
	}

	public Kind getKind() {
		return this.kind;
	}

	/** The lock key as the caller gave it. */
	public String getKey() {
		return this.key;
	}

	/** The lock's name (the annotation's {@code name}), or null. */
	public @Nullable String getLockName() {
		return this.lockName;
	}

	public boolean isFair() {
		return this.fair;
	}

	/** The fencing token once acquired, else 0. */
	public long getFencingToken() {
		return this.fencingToken;
	}

	public void setFencingToken(long fencingToken) {
		this.fencingToken = fencingToken;
	}

	/** The outcome as a tag value, or null until the observation ends. */
	public @Nullable String getOutcome() {
		return this.outcome;
	}

	public void setOutcome(@Nullable String outcome) {
		this.outcome = outcome;
	}

}
