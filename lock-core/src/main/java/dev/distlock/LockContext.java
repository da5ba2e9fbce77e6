package dev.distlock;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Optional;

import dev.distlock.spi.ScopedLease;

/**
 * The leases whose scope the current thread runs in: the body of a
 * {@link DistributedLock} method or of a {@link LockTemplate} {@code execute}/{@code run}
 * call, or a scope opened with {@link #open(Lease)}.
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
	 * The leases whose scopes the current thread runs in, innermost first.
	 */
	public static List<Lease> held() {
		return List.copyOf(LEASES.get());
	}

	/**
	 * Makes {@code lease} the current one on this thread until the returned scope is
	 * closed, on this same thread. {@code execute}, {@code run} and the annotation do
	 * this around their body. Inside a scope the thread may acquire the lease's key again
	 * without waiting (re-entry), and with {@code on-lease-lost: interrupt} a loss
	 * interrupts it.
	 *
	 * <p>
	 * A lease from {@link LockTemplate#acquire} is not re-entrant by itself: it may be
	 * handed to another thread, and its acquiring thread must then wait like any other.
	 * To re-enter it from nested code, open its scope: {@code try (Lease lease =
	 * template.acquire(key, options); LockContext.Scope scope = LockContext.open(lease))
	 * { ... }}.
	 */
	public static Scope open(Lease lease) {
		Deque<Lease> leases = LEASES.get();
		leases.push(lease);
		if (lease instanceof ScopedLease scoped) {
			scoped.scopeOpened();
		}
		return () -> {
			leases.remove(lease);
			if (leases.isEmpty()) {
				LEASES.remove();
			}
			if (lease instanceof ScopedLease scoped) {
				scoped.scopeClosed();
			}
		};
	}

	/** Ends a lease's time as the current one; closing never throws. */
	public interface Scope extends AutoCloseable {

		@Override
		void close();

	}

}
