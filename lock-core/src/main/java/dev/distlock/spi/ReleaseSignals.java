package dev.distlock.spi;

/**
 * Tells waiters that a lock may have become free, so that they need not poll. A signal is
 * a hint, never a promise: a waiter still retries at its retry interval, so a lost signal
 * or a dropped subscription costs at most that interval.
 */
public interface ReleaseSignals {

	/** No signals: waiters poll at their retry interval. */
	ReleaseSignals NONE = (key, onRelease) -> () -> {
	};

	/**
	 * Calls {@code onRelease} whenever {@code key} may have been released, until the
	 * returned subscription is closed. Must not block on the store: {@code onRelease}
	 * runs on a thread of the provider's and must itself return at once.
	 */
	Subscription subscribe(String key, Runnable onRelease);

	/**
	 * Whether signals are being received now; while not, waiters poll with backoff
	 * instead of relying on them.
	 */
	default boolean isListening() {
		return false;
	}

	/**
	 * Whether releases of {@code key}, which a waiter holding a {@link #subscribe
	 * subscription} to it has just found busy, are being signalled now. A provider that
	 * listens per key or per group of keys may start listening on this call (so that an
	 * uncontended lock costs no subscription) and answers false until that is confirmed;
	 * it must then call {@code onRelease} once, so that the waiter tries again and no
	 * release before the confirmation goes unnoticed. Must not block on the store.
	 */
	default boolean isListening(String key) {
		return isListening();
	}

	/** An interest in one key's releases. */
	@FunctionalInterface
	interface Subscription extends AutoCloseable {

		@Override
		void close();

	}

}
