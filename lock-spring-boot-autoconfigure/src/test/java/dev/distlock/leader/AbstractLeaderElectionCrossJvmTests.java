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
 * with default settings; each leader writes its term's token to one fenced resource.
 * Across a {@code kill -9} of the leader and a leader paused past its lease, the fenced
 * value sees one leader at a time: the deposed leader's write is refused, none is
 * accepted. Prints the time to a new leader after each fault.
 */
@Tag("server")
public abstract class AbstractLeaderElectionCrossJvmTests {

	private final List<ChildJvm> children = new ArrayList<>();

	private AutoCloseable server;

	/**
	 * Starts the store's server; the settings that lead a {@link LeaderWorker} to it
	 * follow with {@link #workerSettings()}.
	 */
	protected abstract AutoCloseable startServer();

	/**
	 * The worker's settings for the server: {@link LeaderWorker#STORE} and its address.
	 */
	protected abstract Map<String, String> workerSettings();

	/** The store's name in the report. */
	protected abstract String storeName();

	/**
	 * The longest a new leader may take after a fault, with the store's default lease.
	 */
	protected Duration failover() {
		return Duration.ofSeconds(60);
	}

	@AfterEach
	void stop() throws Exception {
		for (ChildJvm child : this.children) {
			child.close();
		}
		if (this.server != null) {
			this.server.close();
		}
	}

	@Test
	void oneLeaderAtATimeAsTheFencedValueSeesItAcrossAKillAndAPause() throws Exception {
		this.server = startServer();
		for (int i = 1; i <= 3; i++) {
			Map<String, String> settings = new LinkedHashMap<>(workerSettings());
			settings.put("id", "candidate-" + i);
			this.children.add(ChildJvm.start(LeaderWorker.class, settings));
		}
		for (ChildJvm child : this.children) {
			child.awaitLine("READY", Duration.ofSeconds(60));
		}
		Term first = awaitNewTerm(-1, null);
		assertThat(grantedTokens()).as("terms granted at first").hasSize(1);

		long killed = System.nanoTime();
		first.child().kill();
		Term second = awaitNewTerm(first.token(), first.child());
		Duration afterKill = Duration.ofNanos(second.grantedSeenNanos() - killed);
		assertThat(second.token()).isGreaterThan(first.token());

		second.child().send("hold 1");
		second.child().awaitLine("HOLDING 1 " + second.token(), Duration.ofSeconds(10));
		long paused = System.nanoTime();
		second.child().signal("STOP");
		Term third = awaitNewTerm(second.token(), second.child());
		Duration afterPause = Duration.ofNanos(third.grantedSeenNanos() - paused);
		third.child().awaitLine("WROTE " + third.token(), Duration.ofSeconds(10));
		second.child().signal("CONT");
		second.child().awaitLine("REVOKED " + second.token(), failover());
		Conditions.await("the held write answered", Duration.ofSeconds(10),
				() -> !answersAfterHold(second.child(), "REFUSED " + second.token()).isEmpty()
						|| !answersAfterHold(second.child(), "WROTE " + second.token()).isEmpty());

		int refused = answersAfterHold(second.child(), "REFUSED " + second.token()).size();
		int accepted = answersAfterHold(second.child(), "WROTE " + second.token()).size();
		System.out.println("Leader failover on " + storeName() + ", default settings: after kill -9 "
				+ afterKill.toMillis() + "ms, after a pause past the lease " + afterPause.toMillis()
				+ "ms; the deposed leader's writes: " + refused + " refused, " + accepted + " accepted");
		assertThat(accepted).as("writes of the deposed leader accepted").isZero();
		assertThat(refused).as("writes of the deposed leader refused").isGreaterThanOrEqualTo(1);
		assertThat(third.token()).isGreaterThan(second.token());
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
					.findFirst();
				if (token.isPresent()) {
					found[0] = new Term(child, token.get(), System.nanoTime());
					return true;
				}
			}
			return false;
		});
		return found[0];
	}

	private List<Long> grantedTokens() {
		List<Long> tokens = new ArrayList<>();
		for (ChildJvm child : this.children) {
			lines(child).stream()
				.filter((line) -> line.startsWith("GRANTED "))
				.forEach((line) -> tokens.add(Long.parseLong(line.substring(8))));
		}
		return tokens;
	}

	/**
	 * The lines equal to {@code answer} that the child printed after its held write
	 * began.
	 */
	private static List<String> answersAfterHold(ChildJvm child, String answer) {
		List<String> lines = lines(child);
		int held = lines.indexOf(lines.stream().filter((l) -> l.startsWith("HOLDING 1 ")).findFirst().orElseThrow());
		return lines.subList(held + 1, lines.size()).stream().filter(answer::equals).toList();
	}

	private static List<String> lines(ChildJvm child) {
		return child.output().lines().toList();
	}

	record Term(ChildJvm child, long token, long grantedSeenNanos) {
	}

}
