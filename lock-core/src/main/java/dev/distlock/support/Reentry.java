package dev.distlock.support;

import java.util.List;

import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.PermitCountMismatchException;
import dev.distlock.spi.LockKind;
import org.jspecify.annotations.Nullable;

/**
 * Re-entry, which is local to the JVM and follows the scope: which held lease a nested
 * acquisition of the current thread joins instead of asking the store.
 */
final class Reentry {

	private Reentry() {
	}

	/**
	 * The lease of {@code template} for {@code key} whose scope the current thread runs
	 * in, if any: re-entry is for code inside a locked scope on its own thread, never
	 * merely for the thread that once acquired (it may have handed the lease on).
	 */
	static @Nullable ManagedLease scoped(Object template, String key, LockSettings settings) {
		return among(LockContext.held(), template, key, settings, true);
	}

	/**
	 * The lease of {@code template} for {@code key} among {@code scope} (innermost
	 * first), a scope that no thread runs but a context carries (a Reactor
	 * {@code Context}).
	 */
	static @Nullable ManagedLease inContext(List<Lease> scope, Object template, String key, LockSettings settings) {
		return among(scope, template, key, settings, false);
	}

	private static @Nullable ManagedLease among(List<Lease> scope, Object template, String key, LockSettings settings,
			boolean onThread) {
		for (Lease lease : scope) {
			List<Lease> parts = (lease instanceof DefaultMultiLease multi) ? multi.parts() : List.of(lease);
			for (Lease part : parts) {
				ManagedLease managed = DefaultMultiLease.managed(part);
				if (managed != null && managed.key().equals(key)
						&& (onThread ? managed.reentrantFor(template) : managed.reentrantInContextFor(template))
						&& reentersAs(managed.settings(), settings, key)) {
					return managed;
				}
			}
		}
		return null;
	}

	/**
	 * Whether a scope of {@code outer} lets a nested acquisition with {@code inner}
	 * re-enter it: a semaphore only its own permit (locks and semaphores of one key are
	 * unrelated); a writer both sides (reading under a write lock is a downgrade); a
	 * reader only reads. A reader asking to write is refused: two readers upgrading at
	 * once would wait for each other forever.
	 */
	private static boolean reentersAs(LockSettings outer, LockSettings inner, String key) {
		boolean outerPermit = outer.kind() == LockKind.PERMITS;
		boolean innerPermit = inner.kind() == LockKind.PERMITS;
		if (outerPermit || innerPermit) {
			if (outerPermit && innerPermit && outer.permits() != inner.permits()) {
				throw new PermitCountMismatchException(key, outer.permits(), inner.permits());
			}
			return outerPermit && innerPermit;
		}
		if (outer.kind() == LockKind.SHARED && inner.kind() != LockKind.SHARED) {
			throw new IllegalStateException("Lock '" + key + "': this thread holds the read lock and asks for the"
					+ " write lock; upgrading is not supported, since two readers upgrading at once would wait for each"
					+ " other forever. Release the read lock first, or take the write lock from the start");
		}
		return true;
	}

}
