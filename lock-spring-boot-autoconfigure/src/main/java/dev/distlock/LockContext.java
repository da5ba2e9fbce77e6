package dev.distlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The leases held by the current thread through {@link DistributedLock} methods and
 * {@link LockTemplate} {@code execute}/{@code run} calls.
 */
public final class LockContext {

	private static final ThreadLocal<Deque<Lease>> LEASES = ThreadLocal.withInitial(ArrayDeque::new);

	private LockContext() {
	}

	/**
	 * The innermost lease held by the current thread inside an annotated method or a
	 * template callback, for example to pass its {@linkplain Lease#fencingToken() fencing
	 * token} on.
	 */
	public static Optional<Lease> current() {
		return Optional.ofNullable(LEASES.get().peek());
	}

	/**
	 * Makes {@code lease} the current one until the returned scope is closed. Framework
	 * use.
	 */
	public static Scope open(Lease lease) {
		Deque<Lease> leases = LEASES.get();
		leases.push(lease);
		return () -> {
			leases.remove(lease);
			if (leases.isEmpty()) {
				LEASES.remove();
			}
		};
	}

	/** Ends a lease's time as the current one; closing never throws. */
	public interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
