package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderSettings;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Leader election on a ZooKeeper server, two candidates with clients of their own and
 * default settings: the lease is the session, so a leader whose session ends is revoked
 * as soon as the store reports it, and the other candidate takes over with a higher
 * token.
 */
@Tag("server")
class ZookeeperLeaderElectionTests {

	private final TestingServer server = TestZookeeper.server();

	private final List<AutoCloseable> closeables = new ArrayList<>();

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
		this.server.close();
	}

	@Test
	void aLeaderWhoseSessionEndsIsRevokedAndTheOtherCandidateTakesOver() throws Exception {
		Candidate a = candidate("a");
		a.elections.start();
		long first = a.granted();
		Candidate b = candidate("b");
		b.elections.start();
		TestZookeeper.expireSession(a.client);
		assertThat(a.revoked()).isEqualTo(LeaderListener.Reason.LEASE_LOST);
		assertThat(a.election.isLeader()).isFalse();
		assertThat(b.granted()).isGreaterThan(first);
	}

	@Test
	void yieldHandsTheRoleOn() throws Exception {
		Candidate a = candidate("a");
		a.elections.start();
		long first = a.granted();
		Candidate b = candidate("b");
		b.elections.start();
		a.election.yield();
		assertThat(a.revoked()).isEqualTo(LeaderListener.Reason.YIELDED);
		assertThat(b.granted()).isGreaterThan(first);
		b.elections.close();
		assertThat(b.revoked()).isEqualTo(LeaderListener.Reason.SHUTDOWN);
	}

	private Candidate candidate(String id) {
		CuratorFramework client = TestZookeeper.client(this.server.getConnectString());
		this.closeables.add(client);
		ZookeeperLockProvider provider = new ZookeeperLockProvider(client);
		this.closeables.add(provider);
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				TestZookeeper.templateDefaults(Duration.ofSeconds(5)));
		this.closeables.add(template);
		LeaderElections elections = new LeaderElections(template, id);
		this.closeables.add(elections);
		Candidate candidate = new Candidate(client, elections);
		candidate.election = elections.add("jobs", LeaderSettings.DEFAULTS, candidate);
		return candidate;
	}

	static final class Candidate implements LeaderListener {

		final CuratorFramework client;

		final LeaderElections elections;

		LeaderElection election;

		private final BlockingQueue<Object> events = new LinkedBlockingQueue<>();

		Candidate(CuratorFramework client, LeaderElections elections) {
			this.client = client;
			this.elections = elections;
		}

		@Override
		public void granted(LeaderElection election, long token) {
			this.events.add(token);
		}

		@Override
		public void revoked(LeaderElection election, long token, Reason reason) {
			this.events.add(reason);
		}

		long granted() throws InterruptedException {
			Object event = this.events.poll(30, TimeUnit.SECONDS);
			assertThat(event).as("granted").isInstanceOf(Long.class);
			return (Long) event;
		}

		Reason revoked() throws InterruptedException {
			Object event = this.events.poll(30, TimeUnit.SECONDS);
			assertThat(event).as("revoked").isInstanceOf(Reason.class);
			return (Reason) event;
		}

	}

}
