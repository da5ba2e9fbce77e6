package dev.distlock;

import java.io.Serial;

import org.springframework.context.ApplicationEvent;

/**
 * Published in the application context when this instance no longer leads a leader
 * election, on the election's thread, before the term's lease is released. The source is
 * the {@link LeaderElection}.
 */
public final class LeaderRevokedEvent extends ApplicationEvent {

	@Serial
	private static final long serialVersionUID = 1L;

	private final long token;

	private final LeaderListener.Reason reason;

	public LeaderRevokedEvent(LeaderElection election, long token, LeaderListener.Reason reason) {
		super(election);
		this.token = token;
		this.reason = reason;
	}

	/** The election this instance no longer leads. */
	public LeaderElection getElection() {
		return (LeaderElection) getSource();
	}

	/** The ended term's fencing token. */
	public long getToken() {
		return this.token;
	}

	/** Why the term ended. */
	public LeaderListener.Reason getReason() {
		return this.reason;
	}

	@Override
	public String toString() {
		return "LeaderRevokedEvent[election=" + getElection().name() + ", token=" + this.token + ", reason="
				+ this.reason + "]";
	}

}
