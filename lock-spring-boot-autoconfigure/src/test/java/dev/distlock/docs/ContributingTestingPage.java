package dev.distlock.docs;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import dev.distlock.contract.AbstractLockProviderContractTests;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fault.FaultReport;
import dev.distlock.harness.fault.FaultRun;
import dev.distlock.harness.fault.FaultScenario;
import dev.distlock.harness.fault.FaultSchedule;
import dev.distlock.harness.fault.FaultTarget;
import dev.distlock.harness.fuzz.AbstractCrossJvmFuzzTests;
import dev.distlock.harness.fuzz.AbstractHolderKilledTests;
import dev.distlock.harness.fuzz.AbstractHolderPausedTests;
import dev.distlock.harness.redis.RedisResources;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The code of {@code docs/contributing/testing.md}. The test classes are compiled, never
 * run: the module's pom keeps this package out of the test runs.
 */
class ContributingTestingPage {

	// @formatter:off
	class MyLockProviderContractTests extends AbstractLockProviderContractTests {

		private static final MyLockProvider provider = new MyLockProvider(connect());

		private static final MyLockProvider otherProvider = new MyLockProvider(connect());

		@Override
		protected LockProvider provider() {
			return provider;
		}

		@Override
		protected LockProvider otherProvider() {
			return otherProvider;
		}

		// tests of what is particular to this store
	}
	// @formatter:on

	// @formatter:off
	class MyCrossJvmFuzzTests extends AbstractCrossJvmFuzzTests {        // threads + a second JVM, read-pause-write

		@Override
		protected StoreFixture startStore() {
			return new MyStoreFixture();   // your store and a RedisServer for the resources
		}

	}

	class MyHolderKilledTests extends AbstractHolderKilledTests { @Override protected StoreFixture startStore() { return new MyStoreFixture(); } }  // the holder JVM gets kill -9
	class MyHolderPausedTests extends AbstractHolderPausedTests { @Override protected StoreFixture startStore() { return new MyStoreFixture(); } }  // the holder JVM gets SIGSTOP
	// @formatter:on

	// @formatter:off
	public final class MyStoreFixture implements StoreFixture {

		private final MyServer store = MyServer.start();             // on a free loopback port
		private final RedisServer resources = RedisServer.start();

		@Override public Class<? extends ProviderFactory> providerFactory() { return MyProviderFactory.class; }
		@Override public Class<? extends ResourceFactory> resourceFactory() { return RedisResources.class; }

		@Override
		public Map<String, String> settings() {
			Map<String, String> settings = new LinkedHashMap<>(RedisResources.settings(this.resources));
			settings.put("my.port", Integer.toString(this.store.port()));
			return settings;
		}

		@Override
		public void close() {
			this.store.close();
			this.resources.close();
		}

	}
	// @formatter:on

	// @formatter:off
	class MyFaultSuiteTests {

		private static final List<FaultReport> reports = new ArrayList<>();

		@ParameterizedTest
		@EnumSource(MyFaultClass.class)            // enum MyFaultClass implements FaultScenario<MyFaultTarget>
		void faultsAreSurvivedOrCaughtByFencing(MyFaultClass fault) throws Exception {
			FaultReport report = FaultRun.run(fault, Duration.ofSeconds(10), System.currentTimeMillis());
			reports.add(report);
			report.assertPassed(fault);
		}

		@AfterAll
		static void writeTable() throws IOException {
			System.out.println(FaultReport.writeTable(reports, "10 s per fault class", Path.of("target", "fault-report.md")));
		}

	}
	// @formatter:on

	static Object connect() {
		throw new UnsupportedOperationException();
	}

	static class MyLockProvider implements LockProvider {

		MyLockProvider(Object connection) {
		}

		@Override
		public CompletionStage<LockAttempt> tryLock(LockRequest request) {
			throw new UnsupportedOperationException();
		}

	}

	static class MyServer implements AutoCloseable {

		static MyServer start() {
			throw new UnsupportedOperationException();
		}

		int port() {
			throw new UnsupportedOperationException();
		}

		@Override
		public void close() {
		}

	}

	public static class MyProviderFactory implements ProviderFactory {

		@Override
		public LockProvider create(Map<String, String> settings) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void close() {
		}

	}

	abstract static class MyFaultTarget implements FaultTarget {

	}

	enum MyFaultClass implements FaultScenario<MyFaultTarget> {

		PARTITION;

		@Override
		public boolean inModel() {
			return true;
		}

		@Override
		public MyFaultTarget start() {
			throw new UnsupportedOperationException();
		}

		@Override
		public void inject(FaultSchedule<MyFaultTarget> run) {
		}

	}

}
