package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.spi.LocalHandover;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Mutual exclusion under contention, for any store: threads of two templates in this JVM
 * (each over a provider of its own, as two application instances) and of a second JVM
 * ({@link FuzzWorker}) do read-pause-write increments of one {@link SharedCounter} under
 * one lock ({@link FuzzLoop}). The final value must equal the number of increments that
 * reported success, and no holder may ever find another inside. A store's test extends
 * this class and starts its store in {@link #startStore()}.
 */
public abstract class AbstractCrossJvmFuzzTests {

	private static final Duration DURATION = Duration.ofSeconds(6);

	private static final Duration CHILD_TIMEOUT = Duration.ofSeconds(30);

	/** Starts a fresh store and resource for one test; the test closes it. */
	protected abstract StoreFixture startStore();

	@Test
	void noIncrementIsLostAndNoHoldersOverlapAcrossThreadsAndJvms() throws Exception {
		try (StoreFixture store = startStore()) {
			Map<String, String> settings = store.childSettings();
			settings.put(FuzzWorker.THREADS, "3");
			settings.put(FuzzWorker.MILLIS, String.valueOf(DURATION.toMillis()));
			RenewalScheduler scheduler = new RenewalScheduler();
			ProviderFactory first = store.newProviderFactory();
			ProviderFactory second = store.newProviderFactory();
			try (ChildJvm worker = ChildJvm.start(FuzzWorker.class, settings);
					SharedCounter counter = store.newResourceFactory().sharedCounter(settings)) {
				List<DefaultLockTemplate> templates = List.of(
						Templates.of(Templates.answering(first, settings), scheduler),
						Templates.of(Templates.answering(second, settings), scheduler));
				templates.get(0).run("fuzz-warm-up", counter::read);
				worker.awaitLine("READY", CHILD_TIMEOUT);
				worker.send("GO");
				FuzzLoop.Result local = FuzzLoop.run(templates, counter, 4, DURATION);
				FuzzLoop.Result remote = FuzzLoop.Result.parse(worker.awaitLine(FuzzLoop.Result.PREFIX, CHILD_TIMEOUT));
				assertThat(worker.awaitExit(CHILD_TIMEOUT)).isZero();
				long value = counter.read();
				String summary = "counter=" + value + ", this JVM: " + local + ", worker JVM: " + remote;
				System.out.println("Fuzz: " + summary);
				assertThat(local.errors() + remote.errors()).as(summary).isZero();
				assertThat(local.lost() + remote.lost()).as(summary).isZero();
				assertThat(local.overlaps() + remote.overlaps()).as(summary).isZero();
				assertThat(local.successes()).as(summary).isPositive();
				assertThat(remote.successes()).as(summary).isPositive();
				assertThat(value).as(summary).isEqualTo(local.successes() + remote.successes());
				assertThat(counter.inside()).as(summary).isZero();
				if (templates.get(0).supports(LocalHandover.class)) {
					// Hand-over is on by default: a run that never handed over proves
					// nothing of it.
					assertThat(local.handovers()).as("local hand-overs in this JVM: " + summary).isPositive();
					assertThat(remote.handovers()).as("local hand-overs in the worker JVM: " + summary).isPositive();
				}
			}
			finally {
				scheduler.close();
				first.close();
				second.close();
			}
		}
	}

}
