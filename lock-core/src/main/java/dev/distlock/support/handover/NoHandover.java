package dev.distlock.support.handover;

import java.util.concurrent.ConcurrentMap;
import java.util.function.UnaryOperator;

import dev.distlock.spi.LockKind;
import org.jspecify.annotations.Nullable;

/** Local hand-over off: no lock passes in memory, and nobody stands back. */
final class NoHandover<L extends HandedLease<L>> implements Handover<L> {

	@SuppressWarnings("rawtypes")
	static final NoHandover INSTANCE = new NoHandover();

	@Override
	public boolean applies(LockKind kind) {
		return false;
	}

	@Override
	public int tokens(LockKind kind) {
		return 1;
	}

	@Override
	public <Q extends HandoverLine.Line<L>> boolean handOver(L lease, ConcurrentMap<String, Q> lines) {
		return false;
	}

	@Override
	public @Nullable L takeOver(L left, HandoverTerms wanted, long askedNanos, long waitDeadlineNanos,
			UnaryOperator<L> successor) {
		return null;
	}

	@Override
	public void releasedToOthers(L lease, HandoverLine.@Nullable Line<L> line) {
	}

	@Override
	public long standBackNanos(LockKind kind, HandoverLine<L> line) {
		return 0;
	}

	@Override
	public void markedHere(LockKind kind, HandoverLine<L> line, boolean marked) {
	}

	@Override
	public long handovers() {
		return 0;
	}

}
