package dev.distlock;

/**
 * A semaphore was asked for with a permit count different from the one it is held with:
 * two callers that disagree on how many holders a resource admits would each count
 * against their own number, so the store refuses rather than guessing. The count of a
 * semaphore may change only once nobody holds a permit of it.
 */
public class PermitCountMismatchException extends DistributedLockException {

	private static final long serialVersionUID = 1L;

	private final int declaredPermits;

	private final int requestedPermits;

	public PermitCountMismatchException(String key, int declaredPermits, int requestedPermits) {
		super(key,
				"Semaphore '" + key + "' is held with " + declaredPermits + " permits, but was asked for with "
						+ requestedPermits + ": every caller of one semaphore must declare the same permit count",
				null);
		this.declaredPermits = declaredPermits;
		this.requestedPermits = requestedPermits;
	}

	/** The permit count the semaphore is held with now. */
	public int getDeclaredPermits() {
		return this.declaredPermits;
	}

	/** The permit count the refused caller declared. */
	public int getRequestedPermits() {
		return this.requestedPermits;
	}

}
