package dev.distlock;

import java.io.Serial;

import org.springframework.context.ApplicationEvent;

/**
 * Published in the application context when this instance is granted the role in a leader
 * election, on the election's thread. The source is the {@link LeaderElection}.
 */
public final class LeaderGrantedEvent extends ApplicationEvent {

	@Serial
	private static final long serialVersionUID = 1L;

	private final long token;

	public LeaderGrantedEvent(LeaderElection election, long token) {
		super(election);
		this.token = token;
	}

	/** The election this instance now leads. */
	public LeaderElection getElection() {
		return (LeaderElection) getSource();
	}

	/** The term's fencing token: pass it to fenced writes. */
	public long getToken() {
		return this.token;
	}

	@Override
	public String toString() {
		return "LeaderGrantedEvent[election=" + getElection().name() + ", token=" + this.token + "]";
	}

}
