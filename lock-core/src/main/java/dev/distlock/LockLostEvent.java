package dev.distlock;

import java.io.Serial;

import org.springframework.context.ApplicationEvent;

/**
 * Published in the application context as soon as a held lease is known lost, while its
 * holder may still be running: the renewal found the key expired or owned by another
 * holder, the lease ran out without renewal, or Redis stayed unreachable until the lease
 * deadline.
 *
 * <p>
 * Published on distlock's watchdog thread, not the holder's; listeners should be quick
 * and must not wait for the holder. The source is the lost {@link Lease}.
 */
public final class LockLostEvent extends ApplicationEvent {

	@Serial
	private static final long serialVersionUID = 1L;

	private final String key;

	private final long fencingToken;

	private final String reason;

	private final String holderThread;

	/**
	 * @param lease the lease that was lost
	 * @param reason why it is known lost
	 * @param holderThread the name of the thread that ran a scope of the lease (the
	 * annotated method, the template callback), or that acquired it and never handed it
	 * on; {@code "none"} if there was none
	 */
	public LockLostEvent(Lease lease, String reason, String holderThread) {
		super(lease);
		this.key = lease.key();
		this.fencingToken = lease.fencingToken();
		this.reason = reason;
		this.holderThread = holderThread;
	}

	/** The lost lease. */
	public Lease getLease() {
		return (Lease) getSource();
	}

	/** The lock key as the user gave it. */
	public String getKey() {
		return this.key;
	}

	/**
	 * The fencing token of the lost lease: writes fenced with it are the ones to
	 * distrust.
	 */
	public long getFencingToken() {
		return this.fencingToken;
	}

	/** Why the lease is known lost. */
	public String getReason() {
		return this.reason;
	}

	/**
	 * The name of the thread that held the lease: the one running its scope (or that
	 * acquired it and never handed it on), or {@code "none"}.
	 */
	public String getHolderThread() {
		return this.holderThread;
	}

	@Override
	public String toString() {
		return "LockLostEvent[key=" + this.key + ", fencingToken=" + this.fencingToken + ", holder=" + this.holderThread
				+ ", reason=" + this.reason + "]";
	}

}
