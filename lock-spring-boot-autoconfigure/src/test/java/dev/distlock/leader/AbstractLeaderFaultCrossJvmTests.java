package dev.distlock.leader;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.distlock.contract.Conditions;
import dev.distlock.harness.ChildJvm;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three candidates in three JVMs elect a leader on one store server that the test starts,
 * with default settings, each reaching the store through a link of its own that the test
 * can cut; each leader writes its term's token to one fenced resource. The leader begins
 * a write, then the fault strikes: the store is killed and restarted on its data once the
 * leader was revoked, or the leader's link is cut (a partition: connections stay open,
 * nothing passes) until another instance leads. The leader must be revoked before the new
 * term is granted, the new term's token is greater, and the deposed leader's write,
 * reaching the resource after the new leader's, is refused. Prints the time to a new
 * leader after each fault.
 */
@Tag("server")
public abstract class AbstractLeaderFaultCrossJvmTests {

	/** One candidate's path to the store, which the test can cut. */
	protected interface Link extends AutoCloseable {

		/** The worker settings that reach the store through this link. */
		Map<String, String> settings();

		/** Passes nothing either way from now on, keeping connections open. */
		void cut();

		/** Ends a {@link #cut()}: held bytes flow on. */
		void heal();

	}

	private final List<ChildJvm> children = new ArrayList<>();

	private final List<Link> links = new ArrayList<>();

	private AutoCloseable server;

	/** Starts the store's server (with its data on disk, to survive a restart). */
	protected abstract AutoCloseable startServer();

	/** A new link to the running server, for one candidate. */
	protected abstract Link link();

	/** Kills the store's server, as a crash would. */
	protected abstract void killServer();

	/** Starts the killed server again on its port and data. */
	protected abstract void restartServer();

	/** The store's name in the report. */
	protected abstract String storeName();

	/** The longest a new leader may take after a fault, with the store's defaults. */
	protected Duration failover() {
		return Duration.ofSeconds(60);
	}

	@AfterEach
	void stop() throws Exception {
		for (ChildJvm child : this.children) {
			child.close();
			// what each candidate saw, for a failure's report; its writes only as a count
			System.out.println("candidate " + (this.children.indexOf(child) + 1) + ": "
					+ lines(child).stream()
						.filter((line) -> !line.startsWith("WROTE ") && !line.startsWith("\tat "))
						.toList()
					+ ", " + lines(child).stream().filter((line) -> line.startsWith("WROTE ")).count() + " writes");
		}
		for (Link link : this.links) {
			link.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void eachLeaderIsRevokedBeforeTheNextAndItsLateWriteRefused() throws Exception {
		this.server = startServer();
		for (int i = 1; i <= 3; i++) {
			Link link = link();
			this.links.add(link);
			Map<String, String> settings = new LinkedHashMap<>(link.settings());
			settings.put("id", "candidate-" + i);
			this.children.add(ChildJvm.start(LeaderWorker.class, settings));
		}
		for (ChildJvm child : this.children) {
			child.awaitLine("READY", Duration.ofSeconds(60));
		}
		Term first = awaitNewTerm(-1, null);
		first.child().awaitLine("WROTE " + first.token(), failover());

		gate(first, "1");
		long restartAt = System.nanoTime();
		killServer();
		first.child().awaitLine("REVOKED " + first.token(), failover());
		restartServer();
		Term second = awaitNewTerm(first.token(), null);
		second.child().awaitLine("WROTE " + second.token(), failover());
		report("a store restart", "1", first, second, restartAt);

		gate(second, "2");
		Link cutOff = this.links.get(this.children.indexOf(second.child()));
		long cutAt = System.nanoTime();
		cutOff.cut();
		second.child().awaitLine("REVOKED " + second.token(), failover());
		Term third = awaitNewTerm(second.token(), second.child());
		// A database keeps the cut leader's open transaction, and the fence's row it
		// locked, until the connection heals or is dropped: the new leader writes after.
		cutOff.heal();
		third.child().awaitLine("WROTE " + third.token(), failover());
		report("a network cut", "2", second, third, cutAt);
	}

	/** The leader begins a write that waits for {@code open <gate>}. */
	private static void gate(Term leader, String gate) throws InterruptedException {
		leader.child().send("gate " + gate);
		leader.child().awaitLine("GATED " + gate + " " + leader.token(), Duration.ofSeconds(10));
	}

	/**
	 * Lets the deposed leader's gated write through, after the new leader's, and checks
	 * and prints the outcome.
	 */
	private void report(String fault, String gate, Term old, Term next, long faultAt) throws InterruptedException {
		Duration toNewLeader = Duration.ofNanos(next.grantedSeenNanos() - faultAt);
		old.child().send("open " + gate);
		String late = old.child().awaitLine("LATE " + gate + " ", Duration.ofSeconds(30));
		int accepted = count(old.child(), "LATE " + gate + " WROTE " + old.token());
		int refused = count(old.child(), "LATE " + gate + " REFUSED " + old.token());
		long revokedAt = at(old.child(), "REVOKED-AT " + old.token() + " ");
		long grantedAt = at(next.child(), "GRANTED-AT " + next.token() + " ");
		String revoked = "REVOKED " + old.token() + " ";
		String reason = line(old.child(), revoked).substring(revoked.length());
		System.out
			.println("Leader failover on " + storeName() + " after " + fault + ", default settings: new leader after "
					+ toNewLeader.toMillis() + "ms; the old leader revoked (" + reason + ") " + (grantedAt - revokedAt)
					+ "ms before the new term; its late write: " + refused + " refused, " + accepted + " accepted");
		assertThat(accepted).as("writes of the deposed leader accepted").isZero();
		assertThat(late).as("the deposed leader's late write").isEqualTo("LATE " + gate + " REFUSED " + old.token());
		assertThat(next.token()).isGreaterThan(old.token());
		assertThat(revokedAt).as("the old leader revoked before the new term was granted").isLessThan(grantedAt);
		assertThat(toNewLeader).isLessThanOrEqualTo(failover());
	}

	/**
	 * A term granted to a child other than {@code not}, with a token above {@code above}.
	 */
	private Term awaitNewTerm(long above, ChildJvm not) {
		Term[] found = new Term[1];
		Conditions.await("a new leader", failover(), () -> {
			for (ChildJvm child : this.children) {
				if (child == not) {
					continue;
				}
				Optional<Long> token = lines(child).stream()
					.filter((line) -> line.startsWith("GRANTED "))
					.map((line) -> Long.parseLong(line.substring(8)))
					.filter((t) -> t > above)
					.max(Long::compare);
				if (token.isPresent() && (found[0] == null || token.get() > found[0].token())) {
					found[0] = new Term(child, token.get(), System.nanoTime());
				}
			}
			return found[0] != null;
		});
		return found[0];
	}

	private static int count(ChildJvm child, String line) {
		return (int) lines(child).stream().filter(line::equals).count();
	}

	private static String line(ChildJvm child, String prefix) {
		return lines(child).stream().filter((l) -> l.startsWith(prefix)).findFirst().orElseThrow();
	}

	/** The wall-clock time on a {@code GRANTED-AT} or {@code REVOKED-AT} line. */
	private static long at(ChildJvm child, String prefix) {
		return Long.parseLong(line(child, prefix).substring(prefix.length()));
	}

	private static List<String> lines(ChildJvm child) {
		return child.output().lines().toList();
	}

	record Term(ChildJvm child, long token, long grantedSeenNanos) {
	}

}
