package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderListener.Reason;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderSettings;
import dev.distlock.LockOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Leader elections of two candidates (two templates, as two JVMs) on the in-memory store
 * with faults.
 */
class LeaderElectionTests {

	private static final LeaderSettings FAST = new LeaderSettings(Duration.ofSeconds(3), Duration.ofMillis(1500),
			Duration.ofMillis(200), Duration.ofSeconds(30));

	private final FaultyStore store = new FaultyStore(Duration.ofSeconds(10));

	@AutoClose
	private final Closing closing = new Closing();

	@AfterEach
	void close() throws Exception {
		this.store.latency = Duration.ZERO;
	}

	private Candidate candidate(String id, LeaderSettings settings) {
		RenewalScheduler scheduler = this.closing.scheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(this.store, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(Duration.ofSeconds(30))
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(50))
					.build());
		this.closing.add(template);
		LeaderElections elections = new LeaderElections(template, id);
		this.closing.add(elections);
		Candidate candidate = new Candidate(elections);
		candidate.election = elections.add("jobs", settings, candidate);
		return candidate;
	}

	@Test
	void grantsTheRoleToOneCandidateWithTheTermsToken() throws InterruptedException {
		Candidate a = candidate("a", FAST);
		Candidate b = candidate("b", FAST);
		a.elections.start();
		Event granted = a.next();
		b.elections.start();
		assertThat(granted.reason).isNull();
		assertThat(a.election.isLeader()).isTrue();
		assertThat(a.election.currentToken()).hasValue(granted.token);
		assertThat(b.election.isLeader()).isFalse();
		assertThat(b.election.currentToken()).isEmpty();
		assertThat(b.events.poll(500, TimeUnit.MILLISECONDS)).as("b granted while a leads").isNull();
	}

	@Test
	void revokesAtOnceWhenTheLeaseIsLostAndTheOtherCandidateTakesOver() throws InterruptedException {
		Candidate a = candidate("a", FAST);
		a.elections.start();
		Event first = a.next();
		Candidate b = candidate("b", FAST);
		b.elections.start();
		this.store.store.expire("leader:jobs");
		Event revoked = a.next();
		assertThat(revoked.reason).isEqualTo(Reason.LEASE_LOST);
		assertThat(revoked.token).isEqualTo(first.token);
		Event next = b.next();
		assertThat(next.token).isGreaterThan(first.token);
	}

	// Waits out renewals held on the wire for most of a lease.
	@Test
	@Tag("slow")
	void revokesAtTheRenewDeadlineBeforeTheLeaseCanRunOut() throws InterruptedException {
		Candidate a = candidate("a", FAST);
		a.elections.start();
		Event granted = a.next();
		Candidate b = candidate("b", FAST);
		b.elections.start();
		// Renewals stay on the wire: the leader cannot prove its lease any more.
		this.store.latency = Duration.ofSeconds(8);
		Event revoked = a.next();
		long revokedAt = System.nanoTime();
		assertThat(revoked.reason).isEqualTo(Reason.RENEWAL_FAILED);
		assertThat(a.election.isLeader()).isFalse();
		assertThat(Duration.ofNanos(revokedAt - granted.atNanos)).as("revoked before the lease ran out")
			.isLessThan(FAST.leaseTime());
		assertThat(b.grantedAtNanos()).as("b not granted before a was revoked").isEqualTo(0);
		Event next = b.next();
		assertThat(next.atNanos - revokedAt).as("b granted after a was revoked").isPositive();
		assertThat(next.token).isGreaterThan(granted.token);
	}

	@Test
	void yieldHandsTheRoleToTheOtherCandidate() throws InterruptedException {
		Candidate a = candidate("a", FAST);
		a.elections.start();
		Event first = a.next();
		Candidate b = candidate("b", FAST);
		b.elections.start();
		a.election.yield();
		assertThat(a.election.isLeader()).isFalse();
		assertThat(a.next().reason).isEqualTo(Reason.YIELDED);
		Event taken = b.next();
		assertThat(taken.token).isGreaterThan(first.token);
		assertThat(a.election.isLeader()).isFalse();
	}

	@Test
	void aCandidateThatYieldedWaitsForItsBackoffBeforeItCampaignsAgain() throws InterruptedException {
		LeaderSettings settings = new LeaderSettings(FAST.leaseTime(), FAST.renewDeadline(), FAST.retryPeriod(),
				Duration.ofSeconds(1));
		Candidate a = candidate("a", settings);
		a.elections.start();
		a.next();
		a.election.yield();
		Event yielded = a.next();
		Event again = a.next();
		assertThat(again.reason).isNull();
		assertThat(Duration.ofNanos(again.atNanos - yielded.atNanos)).isGreaterThanOrEqualTo(settings.yieldBackoff());
	}

	@Test
	void closingRevokesTheLeaderAndReleasesTheRole() throws InterruptedException {
		Candidate a = candidate("a", FAST);
		a.elections.start();
		Event first = a.next();
		Candidate b = candidate("b", FAST);
		b.elections.start();
		long closing = System.nanoTime();
		a.elections.close();
		assertThat(a.next().reason).isEqualTo(Reason.SHUTDOWN);
		Event taken = b.next();
		assertThat(taken.token).isGreaterThan(first.token);
		assertThat(Duration.ofNanos(taken.atNanos - closing)).as("released, not left to expire")
			.isLessThan(FAST.leaseTime());
	}

	@Test
	void tokensRiseAcrossTerms() throws InterruptedException {
		LeaderSettings noBackoff = new LeaderSettings(FAST.leaseTime(), FAST.renewDeadline(), FAST.retryPeriod(),
				Duration.ZERO);
		Candidate a = candidate("a", noBackoff);
		Candidate b = candidate("b", noBackoff);
		a.elections.start();
		b.elections.start();
		List<Long> tokens = new ArrayList<>();
		while (tokens.size() < 6) {
			Await.until("a leader", Duration.ofSeconds(10), () -> a.election.isLeader() || b.election.isLeader());
			LeaderElection leader = a.election.isLeader() ? a.election : b.election;
			OptionalLong token = leader.currentToken();
			if (token.isPresent()) {
				tokens.add(token.getAsLong());
				leader.yield();
			}
		}
		assertThat(tokens).isSorted().doesNotHaveDuplicates();
	}

	@Test
	void settingsRefuseARenewDeadlineNotShorterThanTheLease() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LeaderSettings(Duration.ofSeconds(10), Duration.ofSeconds(10), Duration.ofSeconds(1),
					Duration.ZERO))
			.withMessageContaining("renewDeadline (PT10S) must be shorter than leaseTime (PT10S)");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new LeaderSettings(Duration.ofSeconds(9), Duration.ofSeconds(3), Duration.ofSeconds(1),
					Duration.ZERO))
			.withMessageContaining("longer than a third of leaseTime");
	}

	record Event(long token, Reason reason, long atNanos) {
	}

	static final class Candidate implements LeaderListener {

		final LeaderElections elections;

		LeaderElection election;

		final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

		volatile Event lastGranted;

		volatile long firstGrantedNanos;

		Candidate(LeaderElections elections) {
			this.elections = elections;
		}

		@Override
		public void granted(LeaderElection election, long token) {
			Event event = new Event(token, null, System.nanoTime());
			this.lastGranted = event;
			if (this.firstGrantedNanos == 0) {
				this.firstGrantedNanos = event.atNanos;
			}
			this.events.add(event);
		}

		@Override
		public void revoked(LeaderElection election, long token, Reason reason) {
			this.events.add(new Event(token, reason, System.nanoTime()));
		}

		long grantedAtNanos() {
			return this.firstGrantedNanos;
		}

		Event next() throws InterruptedException {
			Event event = this.events.poll(10, TimeUnit.SECONDS);
			assertThat(event).as(this.elections.instanceId() + "'s next leader event").isNotNull();
			return event;
		}

	}

}
