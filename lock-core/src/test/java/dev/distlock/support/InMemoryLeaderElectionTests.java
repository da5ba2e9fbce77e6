package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderListener;
import dev.distlock.LeaderSettings;
import dev.distlock.LockOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Four candidates on the in-memory store, each on a template of its own with its own
 * campaign thread, and a thread that keeps sampling who leads. Across yields and leaders
 * revoked at the renew deadline (their renewals stalled), no two candidates lead at once,
 * neither as {@link LeaderElection#isLeader()} tells nor as the listeners are told, and
 * every term has a greater token.
 */
class InMemoryLeaderElectionTests {

	private static final LeaderSettings FAST = new LeaderSettings(Duration.ofSeconds(3), Duration.ofMillis(1500),
			Duration.ofMillis(200), Duration.ofMillis(500));

	private final FaultyStore store = new FaultyStore(Duration.ofSeconds(10));

	@AutoClose
	private final Closing closing = new Closing();

	/** The candidate leading now as its listeners were told; null between terms. */
	private final AtomicReference<String> leading = new AtomicReference<>();

	private final ConcurrentLinkedQueue<String> overlaps = new ConcurrentLinkedQueue<>();

	private final ConcurrentLinkedQueue<Long> grantedTokens = new ConcurrentLinkedQueue<>();

	private final ConcurrentLinkedQueue<LeaderListener.Reason> revocations = new ConcurrentLinkedQueue<>();

	private final AtomicLong samples = new AtomicLong();

	private volatile boolean sampling = true;

	private Thread sampler;

	@AfterEach
	void close() throws Exception {
		this.sampling = false;
		this.store.latency = Duration.ZERO;
		if (this.sampler != null) {
			this.sampler.join(5000);
		}
	}

	@Test
	@Tag("slow")
	void oneLeaderAtATimeAcrossYieldsAndRevocations() {
		List<LeaderElection> candidates = new ArrayList<>();
		for (int i = 1; i <= 4; i++) {
			candidates.add(candidate("candidate-" + i));
		}
		this.sampler = new Thread(() -> sample(candidates), "leader-sampler");
		this.sampler.setDaemon(true);
		this.sampler.start();
		long above = 0;
		for (int round = 1; round <= 8; round++) {
			LeaderElection leader = awaitLeader(candidates, above);
			long token = leader.currentToken().orElse(above);
			above = Math.max(above, token);
			long sampled = this.samples.get();
			Await.until("the sampler sees term " + token, Duration.ofSeconds(10),
					() -> this.samples.get() > sampled + 10);
			if (round % 4 == 0) {
				// renewals stalled past the renew deadline: the leader must step down
				// first
				this.store.latency = Duration.ofSeconds(5);
				Await.until("the stalled leader revoked", Duration.ofSeconds(10), () -> !leader.isLeader());
				this.store.latency = Duration.ZERO;
			}
			else {
				leader.yield();
			}
		}
		awaitLeader(candidates, above);
		// The ninth term's token shows before its listener has been told.
		Await.until("the ninth term granted to its listener", Duration.ofSeconds(10),
				() -> this.grantedTokens.size() > 8);
		assertThat(this.overlaps).as("terms granted while another was not yet revoked").isEmpty();
		assertThat(this.revocations).contains(LeaderListener.Reason.YIELDED, LeaderListener.Reason.RENEWAL_FAILED)
			.doesNotContain(LeaderListener.Reason.LEASE_LOST);
		assertThat(new ArrayList<>(this.grantedTokens)).isSorted().doesNotHaveDuplicates().hasSizeGreaterThan(8);
	}

	private LeaderElection awaitLeader(List<LeaderElection> candidates, long above) {
		LeaderElection[] found = new LeaderElection[1];
		Await.until("a leader with a token above " + above, Duration.ofSeconds(20), () -> {
			for (LeaderElection candidate : candidates) {
				if (candidate.currentToken().orElse(0) > above) {
					found[0] = candidate;
					return true;
				}
			}
			return false;
		});
		return found[0];
	}

	private LeaderElection candidate(String id) {
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
		LeaderElection election = elections.add("jobs", FAST, new LeaderListener() {

			@Override
			public void granted(LeaderElection election, long token) {
				InMemoryLeaderElectionTests.this.grantedTokens.add(token);
				String before = InMemoryLeaderElectionTests.this.leading.getAndSet(id);
				if (before != null) {
					InMemoryLeaderElectionTests.this.overlaps
						.add(id + " granted " + token + " while " + before + " led");
				}
			}

			@Override
			public void revoked(LeaderElection election, long token, Reason reason) {
				InMemoryLeaderElectionTests.this.revocations.add(reason);
				InMemoryLeaderElectionTests.this.leading.compareAndSet(id, null);
			}

		});
		elections.start();
		return election;
	}

	/**
	 * Samples every pair of candidates: {@code a} leads with token t, then {@code b}
	 * leads, then {@code a} still leads with the same t. Then a's term spanned the moment
	 * b was seen leading: two leaders at once.
	 */
	private void sample(List<LeaderElection> candidates) {
		while (this.sampling) {
			for (LeaderElection a : candidates) {
				OptionalLong before = a.currentToken();
				if (before.isEmpty()) {
					continue;
				}
				for (LeaderElection b : candidates) {
					if (b != a && b.isLeader() && a.currentToken().equals(before)) {
						this.overlaps.add(a.instanceId() + " (token " + before.getAsLong() + ") and " + b.instanceId()
								+ " led at once");
					}
				}
			}
			this.samples.incrementAndGet();
			LockSupport.parkNanos(100_000);
		}
	}

}
