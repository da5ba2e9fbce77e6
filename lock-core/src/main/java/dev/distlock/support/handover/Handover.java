package dev.distlock.support.handover;

import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.Executor;
import java.util.function.UnaryOperator;

import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.HandoverSettings;
import org.jspecify.annotations.Nullable;

/**
 * Local hand-over as the template calls it: how many tokens a store acquisition reserves,
 * whether a release leaves its lock for the key's local line, whether a caller at the
 * gate takes it over, and when this JVM's waiters stand back for another JVM's.
 * {@link #off()} answers as if no lock were ever handed over: every holder takes the lock
 * from the store and gives it back there.
 *
 * @param <L> the template's lease type
 */
public interface Handover<L extends HandedLease<L>> {

	/**
	 * Hand-over as {@code settings} say, where the store reserves token blocks; else
	 * {@link #off()}.
	 * @param background runs an owner check for a caller that cannot wait a whole store
	 * timeout for it ({@link HandoverRun})
	 * @param gate passed before every take-over
	 */
	static <L extends HandedLease<L>> Handover<L> of(HandoverSettings settings, LockProvider provider,
			Executor background, TakeOverGate gate) {
		if (!settings.enabled() || settings.maxPasses() <= 0 || !(provider instanceof LocalHandover)) {
			return off();
		}
		return new Cohort<>(settings, provider.callTimeout().toNanos(), background, gate);
	}

	/** No hand-over. */
	@SuppressWarnings("unchecked")
	static <L extends HandedLease<L>> Handover<L> off() {
		return (Handover<L>) NoHandover.INSTANCE;
	}

	/** Whether a lock of {@code kind} may be handed over in this JVM. */
	boolean applies(LockKind kind);

	/**
	 * How many fencing tokens a store acquisition of {@code kind} reserves: a block where
	 * the lock may be handed over, else its own token only.
	 */
	int tokens(LockKind kind);

	/**
	 * Leaves {@code lease}, just released by its holder while still held in the store,
	 * for the next caller in the key's local line, if the rules allow and a caller is in
	 * line. Its renewal has stopped: the caller that takes it over ({@link #takeOver})
	 * starts it again, with the same deadline.
	 * @param lines the template's lines by name; a plain lock's line is named by its key
	 * @return whether it was left for the line (then nothing is released in the store)
	 */
	<Q extends HandoverLine.Line<L>> boolean handOver(L lease, ConcurrentMap<String, Q> lines);

	/**
	 * The caller at the gate takes over {@code left}, a lock left for its line: the lease
	 * {@code successor} makes of it (null if it may not replace {@code left}), started.
	 * Null when it may not take it over; the caller then discards the lock.
	 * @param wanted what the caller asks for
	 * @param askedNanos when the caller asked for the lock
	 * @param waitDeadlineNanos when its wait time runs out
	 * @throws dev.distlock.LockBackendException if the owner check it waited for failed
	 */
	@Nullable L takeOver(L left, HandoverTerms wanted, long askedNanos, long waitDeadlineNanos, UnaryOperator<L> successor);

	/**
	 * The lock of {@code lease} went back to the store for a waiter of another JVM: this
	 * JVM's waiters on {@code line} may stand back.
	 */
	void releasedToOthers(L lease, HandoverLine.@Nullable Line<L> line);

	/**
	 * Nanoseconds a waiter of {@code kind} on {@code line} stands back before asking the
	 * store; 0 or less when it need not.
	 */
	long standBackNanos(LockKind kind, HandoverLine<L> line);

	/**
	 * A busy attempt of {@code kind} on {@code line}, made while a lease of this JVM held
	 * the key (or was being released), marked the key as this JVM's own waiter's:
	 * {@code marked} false when the attempt took the lock.
	 */
	void markedHere(LockKind kind, HandoverLine<L> line, boolean marked);

	/** Locks handed over in memory so far. */
	long handovers();

}
