package dev.distlock.bench;

import java.util.Collection;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * JMH: what {@code @DistributedLock} costs over calling {@link LockTemplate} directly,
 * for the same empty critical section on the in-memory store (so the store's own cost is
 * as small as it gets and the advice's share as large), uncontended, at 1 and 16 threads.
 * Run with {@code ./mvnw -q -pl lock-benchmarks -am verify -Pjmh}; the {@code main}
 * prints the overhead ({@code 1 - annotation / template}) per thread count after JMH's
 * own table.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class AnnotationOverheadBenchmark {

	private ConfigurableApplicationContext context;

	private LockTemplate template;

	private AnnotatedApp.Work work;

	private static final Runnable NOTHING = () -> {
	};

	@Setup(Level.Trial)
	public void start() {
		this.context = new SpringApplicationBuilder(InMemoryApp.class).web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.properties("spring.main.banner-mode=off", "distributed-lock.store=in-memory", "logging.level.root=warn")
			.run();
		this.template = this.context.getBean(LockTemplate.class);
		this.work = this.context.getBean(AnnotatedApp.Work.class);
	}

	@TearDown(Level.Trial)
	public void stop() {
		this.context.close();
	}

	/** A key per thread: uncontended. */
	@State(Scope.Thread)
	public static class Key {

		final String key = "jmh-" + UUID.randomUUID();

	}

	@Benchmark
	@Threads(1)
	public void template1(Key key) {
		this.template.run(key.key, NOTHING);
	}

	@Benchmark
	@Threads(1)
	public void annotation1(Key key) {
		this.work.run(key.key);
	}

	@Benchmark
	@Threads(16)
	public void template16(Key key) {
		this.template.run(key.key, NOTHING);
	}

	@Benchmark
	@Threads(16)
	public void annotation16(Key key) {
		this.work.run(key.key);
	}

	public static void main(String[] args) throws Exception {
		Options options = new OptionsBuilder().parent(new CommandLineOptions(args))
			.include(AnnotationOverheadBenchmark.class.getName())
			.build();
		Collection<RunResult> results = new Runner(options).run();
		StringBuilder overhead = new StringBuilder("Annotation overhead (1 - annotation / template, JMH scores):");
		for (String threads : new String[] { "1", "16" }) {
			double template = score(results, "template" + threads);
			double annotated = score(results, "annotation" + threads);
			overhead.append(String.format(Locale.ROOT, " %s thread(s) %.1f%% (%.3f against %.3f ops/us);", threads,
					100 * (1 - annotated / template), annotated, template));
		}
		System.out.println(overhead);
	}

	private static double score(Collection<RunResult> results, String method) {
		return results.stream()
			.filter((result) -> result.getParams().getBenchmark().endsWith("." + method))
			.mapToDouble((result) -> result.getPrimaryResult().getScore())
			.findFirst()
			.orElse(Double.NaN);
	}

	/** The starter on the in-memory store, with an annotated bean. */
	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DistributedLockAutoConfiguration.class, DistributedLockInMemoryAutoConfiguration.class })
	public static class InMemoryApp {

		@Bean
		AnnotatedApp.Work work() {
			return new AnnotatedApp.Work();
		}

	}

}
