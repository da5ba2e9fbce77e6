package dev.distlock.spi;

import java.util.Optional;

import dev.distlock.LockMode;
import dev.distlock.LockOptions;

/**
 * What a store can do of a lock's options, as the checks at startup (the
 * auto-configuration, {@code @EnableDistributedLocks}) and at the call ask it: the one
 * place that turns a missing {@link LockKind} into the reason given.
 */
public final class Capabilities {

	private Capabilities() {
	}

	/**
	 * The kind of hold {@code options} ask for: a read hold, a permit, a fair lock or a
	 * plain one. Fair read locks and fair semaphores are no kind ({@link #refusal}).
	 */
	public static LockKind kindOf(LockOptions options) {
		if (options.mode() == LockMode.READ) {
			return LockKind.SHARED;
		}
		if (options.permits() != null && options.permits() > 0) {
			return LockKind.PERMITS;
		}
		return Boolean.TRUE.equals(options.fair()) ? LockKind.FAIR : LockKind.EXCLUSIVE;
	}

	/**
	 * Why {@code provider} cannot honour {@code options}, as a sentence naming the store
	 * and what it lacks; empty if it can.
	 */
	public static Optional<String> refusal(LockOptions options, LockProvider provider) {
		LockKind kind = kindOf(options);
		if (Boolean.TRUE.equals(options.fair()) && kind != LockKind.FAIR) {
			return Optional.of("Fair " + ((kind == LockKind.SHARED) ? "read locks" : "semaphores")
					+ " are not offered: fair applies to plain (write) locks; readers never starve a waiting"
					+ " writer, and freed permits wake as many waiters");
		}
		return refusal(provider, kind);
	}

	/**
	 * Why {@code provider} does not offer {@code kind}, naming the store and the kind;
	 * empty if it does.
	 */
	public static Optional<String> refusal(LockProvider provider, LockKind kind) {
		return provider.kinds().contains(kind) ? Optional.empty() : Optional.of(provider.unsupportedReason(kind));
	}

	/**
	 * Fails a request for {@code key} of a kind {@code provider} does not offer, naming
	 * the key, the store and the kind.
	 * @throws UnsupportedOperationException if the store does not offer {@code kind}
	 */
	public static void check(LockProvider provider, LockKind kind, String key) {
		if (!provider.kinds().contains(kind)) {
			throw unsupported(provider, kind, key);
		}
	}

	/**
	 * The refusal of a request for {@code key} of a kind {@code provider} does not offer,
	 * naming the key, the store and the kind; for a store to throw when it is asked all
	 * the same.
	 */
	public static UnsupportedOperationException unsupported(LockProvider provider, LockKind kind, String key) {
		return new UnsupportedOperationException("Lock '" + key + "': " + provider.unsupportedReason(kind));
	}

	/**
	 * Why {@code provider} keeps no countdown latches, naming the store; asked only for a
	 * store whose {@link LockProvider#latches()} is empty.
	 */
	public static String noLatches(LockProvider provider) {
		return "Countdown latches need a store that keeps them, and the " + provider.storeName()
				+ " store does not (it has no " + LatchStore.class.getSimpleName() + ").";
	}

}
