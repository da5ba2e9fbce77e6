package dev.distlock.spi;

import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import org.jspecify.annotations.Nullable;

/**
 * What a store can do of a lock's options, as the startup checks ask it: one answer for
 * the auto-configuration and for {@code @EnableDistributedLocks}.
 */
public final class Capabilities {

	private Capabilities() {
	}

	/**
	 * Why {@code provider} cannot honour {@code options}, as a sentence naming the store
	 * and what it lacks, or null if it can.
	 */
	public static @Nullable String unsupported(LockOptions options, LockProvider provider) {
		boolean read = options.mode() == LockMode.READ;
		boolean semaphore = options.permits() != null && options.permits() > 0;
		if (Boolean.TRUE.equals(options.fair()) && (read || semaphore)) {
			return "Fair " + (read ? "read locks" : "semaphores")
					+ " are not offered: fair applies to plain (write) locks; readers never starve a waiting"
					+ " writer, and freed permits wake as many waiters";
		}
		if (read) {
			return noCapability(provider, SharedLocking.class, "Read locks");
		}
		if (semaphore) {
			return noCapability(provider, PermitLocking.class, "Semaphores (permits)");
		}
		return Boolean.TRUE.equals(options.fair()) ? noFairLocks(provider) : null;
	}

	/**
	 * Why {@code provider} cannot offer what {@code capability} adds, or null if it
	 * implements it.
	 */
	public static @Nullable String noCapability(LockProvider provider, Class<? extends LockProvider> capability,
			String what) {
		if (capability.isInstance(provider)) {
			return null;
		}
		return what + " need a store that offers them, and the " + provider.storeName()
				+ " store does not (it lacks the capability " + capability.getSimpleName() + ").";
	}

	/** Why {@code provider} cannot take fair locks, or null if it can. */
	public static @Nullable String noFairLocks(LockProvider provider) {
		if (provider instanceof FairLocking fair) {
			return fair.fairLocksUnavailable();
		}
		return "Fair locks need a store that queues waiters, and the " + provider.storeName()
				+ " store does not (it lacks the capability " + FairLocking.class.getSimpleName() + ").";
	}

}
