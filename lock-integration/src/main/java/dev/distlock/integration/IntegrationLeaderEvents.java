package dev.distlock.integration;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderListener;

import org.springframework.context.ApplicationEventPublisher;
import org.springframework.integration.leader.Context;
import org.springframework.integration.leader.event.OnGrantedEvent;
import org.springframework.integration.leader.event.OnRevokedEvent;

/**
 * Publishes Spring Integration's {@link OnGrantedEvent} and {@link OnRevokedEvent} for
 * distlock's leader elections, so that code written for Spring Integration's leader
 * initiators works unchanged. The role is the election's name; the event's
 * {@link Context} reads the election live and yields it.
 */
public final class IntegrationLeaderEvents implements LeaderListener {

	private final ApplicationEventPublisher publisher;

	public IntegrationLeaderEvents(ApplicationEventPublisher publisher) {
		this.publisher = publisher;
	}

	@Override
	public void granted(LeaderElection election, long token) {
		this.publisher.publishEvent(new OnGrantedEvent(election, new ElectionContext(election), election.name()));
	}

	@Override
	public void revoked(LeaderElection election, long token, Reason reason) {
		this.publisher.publishEvent(new OnRevokedEvent(election, new ElectionContext(election), election.name()));
	}

	private record ElectionContext(LeaderElection election) implements Context {

		@Override
		public boolean isLeader() {
			return this.election.isLeader();
		}

		@Override
		public void yield() {
			this.election.yield();
		}

		@Override
		public String getRole() {
			return this.election.name();
		}

	}

}
