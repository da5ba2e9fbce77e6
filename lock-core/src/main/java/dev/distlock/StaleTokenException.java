package dev.distlock;

/**
 * A fenced write was refused: the fencing token it carried is lower than the highest
 * token the resource has already accepted, so a newer holder of the lock has written to
 * it since this caller's lease began. The caller's lease is no longer the newest (it ran
 * out during a pause, or was taken over), and its view of the resource may be out of
 * date.
 *
 * <p>
 * Nothing was changed by the refused write: the resource keeps the newer holder's value
 * (and a JDBC transaction that asked for the check is rolled back). Do not retry with the
 * same token, which will be refused again: take the lock again, read the resource afresh
 * and decide anew, or give up. Work the caller did outside the resource (a message sent,
 * a payment taken) is not undone by the refusal.
 *
 * <p>
 * A token equal to the highest one is accepted: the same holder may write twice.
 */
public class StaleTokenException extends DistributedLockException {

	private static final long serialVersionUID = 1L;

	private final long token;

	private final long highestToken;

	/**
	 * @param resource the resource that refused the write, as its fence names it
	 * @param token the token the write carried
	 * @param highestToken the highest token the resource had accepted
	 */
	public StaleTokenException(String resource, long token, long highestToken) {
		super(resource,
				"Write to '" + resource + "' refused: its fencing token " + token + " is lower than the token "
						+ highestToken + " of a newer lock holder that has written to it"
						+ " (this holder's lease ran out or was taken over); nothing was changed",
				null);
		this.token = token;
		this.highestToken = highestToken;
	}

	/** The resource that refused the write (also {@link #getKey()}). */
	public String getResource() {
		return getKey();
	}

	/** The fencing token the refused write carried. */
	public long getToken() {
		return this.token;
	}

	/**
	 * The highest fencing token the resource had accepted when it refused the write:
	 * greater than {@link #getToken()}.
	 */
	public long getHighestToken() {
		return this.highestToken;
	}

}
