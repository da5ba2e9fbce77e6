package dev.distlock.autoconfigure.observation;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockAcquisitionException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.endpoint.DistributedLocksEndpointAutoConfiguration;
import dev.distlock.autoconfigure.inmemory.DistributedLockInMemoryAutoConfiguration;
import dev.distlock.autoconfigure.metrics.DistributedLockMetrics;
import dev.distlock.autoconfigure.metrics.DistributedLockMetricsAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.support.LockObserver;
import io.micrometer.common.KeyValues;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Observations and meters of locks through the auto-configuration: with a
 * {@link TestObservationRegistry} for the observations' key values, and with Spring
 * Boot's own metrics and observation auto-configuration over a real
 * {@code SimpleMeterRegistry} for the meters, on the in-memory store and once on a real
 * Redis. No meter may carry a lock key.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@org.junit.jupiter.api.Tag("server")
class LockObservabilityTests {

	private static final AutoConfigurations LOCKS = AutoConfigurations.of(
			DistributedLockInMemoryAutoConfiguration.class, DistributedLockAutoConfiguration.class,
			DistributedLockObservationAutoConfiguration.class, DistributedLockMetricsAutoConfiguration.class);

	private final ApplicationContextRunner observed = new ApplicationContextRunner().withConfiguration(LOCKS)
		.withUserConfiguration(TestRegistry.class)
		.withPropertyValues("distributed-lock.store=in-memory");

	private final ApplicationContextRunner metered = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(ObservationAutoConfiguration.class, MetricsAutoConfiguration.class,
				SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class))
		.withConfiguration(LOCKS);

	private static String key() {
		return "order:" + UUID.randomUUID();
	}

	@Test
	void anAcquisitionAndItsHoldAreObservedWithTheirKeyValues() {
		this.observed.run((context) -> {
			TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
			String key = key();
			long token = context.getBean(LockTemplate.class)
				.execute(key, LockOptions.builder().name("stock").build(), () -> currentToken());
			TestObservationRegistryAssert.assertThat(registry)
				.hasObservationWithNameEqualTo("distributed.lock.acquire")
				.that()
				.hasBeenStarted()
				.hasBeenStopped()
				.hasLowCardinalityKeyValue("lock.name", "stock")
				.hasLowCardinalityKeyValue("lock.fair", "false")
				.hasLowCardinalityKeyValue("outcome", "acquired")
				.hasLowCardinalityKeyValue("exception", "none")
				.hasHighCardinalityKeyValue("lock.key", key)
				.hasHighCardinalityKeyValue("lock.fencing.token", String.valueOf(token))
				.doesNotHaveLowCardinalityKeyValueWithKey("lock.key");
			TestObservationRegistryAssert.assertThat(registry)
				.hasObservationWithNameEqualTo("distributed.lock.hold")
				.that()
				.hasBeenStopped()
				.hasLowCardinalityKeyValue("outcome", "released")
				.hasHighCardinalityKeyValue("lock.key", key);
			TestObservationRegistryAssert.assertThat(registry).hasNumberOfObservationsEqualTo(2);
		});
	}

	@Test
	void skippedTimedOutAndLostAreObservedAsSuch() {
		this.observed.run((context) -> {
			TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
			LockTemplate template = context.getBean(LockTemplate.class);
			String key = key();
			LockOptions noWait = LockOptions.builder().waitTime(Duration.ZERO).build();
			try (Lease held = template.acquire(key, noWait)) {
				assertThat(onOtherThread(() -> template.tryAcquire(key, noWait))).isEmpty();
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> onOtherThread(() -> template.acquire(key, noWait)));
			}
			Lease shortLease = template.acquire(key(),
					LockOptions.builder().leaseTime(Duration.ofMillis(50)).autoRenew(false).build());
			Conditions.await("the short lease is lost", Duration.ofSeconds(10), () -> !shortLease.isHeld());
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(shortLease::release);
			assertThat(values(context.getBean(Stopped.class), "distributed.lock.acquire", "outcome"))
				.containsExactly("acquired", "skipped", "timeout", "acquired");
			assertThat(values(context.getBean(Stopped.class), "distributed.lock.hold", "outcome"))
				.containsExactly("released", "lease-lost");
			assertThat(values(context.getBean(Stopped.class), "distributed.lock.acquire", "exception"))
				.containsExactly("none", "none", "LockAcquisitionException", "none");
			assertThat(values(context.getBean(Stopped.class), "distributed.lock.hold", "exception"))
				.containsExactly("none", "LeaseLostException");
		});
	}

	@Test
	void aUserConventionReplacesTheDefault() {
		this.observed.withUserConfiguration(UserConvention.class).run((context) -> {
			context.getBean(LockTemplate.class).run(key(), () -> {
			});
			TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
				.hasObservationWithNameEqualTo("orders.lock")
				.that()
				.hasLowCardinalityKeyValue("team", "orders")
				.hasLowCardinalityKeyValue("outcome", "acquired");
		});
	}

	@Test
	void metersCountLeasesWaitersRenewalsAndLossesAndNeverCarryAKey() {
		this.metered.withPropertyValues("distributed-lock.store=in-memory").run((context) -> {
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			List<String> keys = exercise(context.getBean(LockTemplate.class), meters);
			System.out.println("Meters after a real run (in-memory store):\n" + describe(meters));
			assertNoMeterCarries(meters, keys);
		});
	}

	@Test
	void everyMeterAnAlertWatchesExistsAtZeroFromStartup() {
		this.metered
			.withPropertyValues("distributed-lock.store=in-memory", "distributed-lock.locks.stock.wait-time=2s",
					"distributed-lock.locks.reports.lease-time=1m")
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				for (String name : List.of("default", "stock", "reports")) {
					for (LockObserver.LossReason reason : LockObserver.LossReason.values()) {
						Counter lost = meters.find("distributed.lock.leases.lost")
							.tags("lock.name", name, "reason", reason.tagValue())
							.counter();
						assertThat(lost).as("leases.lost for %s, %s before any loss", name, reason.tagValue())
							.isNotNull();
						assertThat(lost.count()).isZero();
					}
				}
				assertThat(meters.get("distributed.lock.leases.held").gauge().value()).isZero();
				assertThat(meters.get("distributed.lock.renewal.round.trips").functionCounter().count()).isZero();
			});
	}

	@Test
	void metersAndObservationsOnRealRedis() {
		this.metered
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DistributedLockRedisAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + RedisServer.shared().port())
			.run((context) -> {
				MeterRegistry meters = context.getBean(MeterRegistry.class);
				List<String> keys = exercise(context.getBean(LockTemplate.class), meters);
				System.out.println("Meters after a real run (Redis store):\n" + describe(meters));
				assertNoMeterCarries(meters, keys);
			});
	}

	@Test
	void withoutMicrometerNothingIsAdded() {
		this.observed.withClassLoader(new FilteredClassLoader(ObservationRegistry.class, MeterRegistry.class))
			.withConfiguration(AutoConfigurations.of(DistributedLocksEndpointAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader("io.micrometer", Endpoint.class.getPackageName()))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(LockTemplate.class)
				.doesNotHaveBean(ObservationLockObserver.class)
				.doesNotHaveBean(DistributedLockMetrics.class)
				.doesNotHaveBean(LockObserver.class));
	}

	/**
	 * Holds one lock with a short lease (so renewals run), has a waiter line up behind
	 * it, loses one lease; checks every meter on the way.
	 */
	private static List<String> exercise(LockTemplate template, MeterRegistry meters) throws Exception {
		String held = key();
		String lost = key();
		LockOptions renewing = LockOptions.builder().leaseTime(Duration.ofSeconds(3)).name("stock").build();
		Lease lease = template.acquire(held, renewing);
		assertThat(meters.get("distributed.lock.leases.held").gauge().value()).isEqualTo(1);
		Conditions.await("a renewal round trip", Duration.ofSeconds(10),
				() -> meters.get("distributed.lock.renewal.round.trips").functionCounter().count() >= 1);
		Conditions.await("the next renewal pending", Duration.ofSeconds(10),
				() -> meters.get("distributed.lock.renewals.pending").gauge().value() >= 1);
		CompletableFuture<Optional<Lease>> waiter = CompletableFuture.supplyAsync(
				() -> template.tryAcquire(held,
						LockOptions.builder().waitTime(Duration.ofSeconds(20)).name("stock").build()),
				TestThreads.EACH);
		Conditions.await("a waiting key", Duration.ofSeconds(10),
				() -> meters.get("distributed.lock.waiting.keys").gauge().value() == 1);
		lease.release();
		waiter.get(20, TimeUnit.SECONDS).orElseThrow().release();
		Lease shortLease = template.acquire(lost,
				LockOptions.builder().leaseTime(Duration.ofMillis(50)).autoRenew(false).name("reports").build());
		Conditions.await("the short lease is lost", Duration.ofSeconds(10), () -> !shortLease.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(shortLease::release);
		// The lease reads as lost as soon as its state turns; the watchdog tells the
		// observers just after.
		// A counter is registered before it is incremented: wait for its count, not for
		// the meter.
		Conditions.await("the loss counted", Duration.ofSeconds(10), () -> {
			Counter counter = meters.find("distributed.lock.leases.lost")
				.tags("lock.name", "reports", "reason", "expired")
				.counter();
			return counter != null && counter.count() >= 1;
		});
		assertThat(meters.get("distributed.lock.leases.lost")
			.tags("lock.name", "reports", "reason", "expired")
			.counter()
			.count()).isEqualTo(1);
		assertThat(meters.get("distributed.lock.leases.held").gauge().value()).isZero();
		assertThat(meters.get("distributed.lock.acquire")
			.tags("lock.name", "stock", "outcome", "acquired", "lock.fair", "false", "exception", "none")
			.timer()
			.count()).isEqualTo(2);
		assertThat(meters.get("distributed.lock.hold")
			.tags("lock.name", "reports", "outcome", "lease-lost")
			.timer()
			.count()).isEqualTo(1);
		return List.of(held, lost);
	}

	private static void assertNoMeterCarries(MeterRegistry meters, List<String> keys) {
		for (Meter meter : meters.getMeters()) {
			for (Tag tag : meter.getId().getTags()) {
				assertThat(keys).as("tag %s of meter %s", tag.getKey(), meter.getId().getName())
					.noneMatch((key) -> tag.getValue().contains(key));
			}
		}
	}

	private static String describe(MeterRegistry meters) {
		return meters.getMeters()
			.stream()
			.filter((meter) -> meter.getId().getName().startsWith("distributed.lock"))
			.map((meter) -> meter.getId().getType() + " " + meter.getId().getName() + " " + meter.getId().getTags()
					+ " " + meter.measure())
			.sorted()
			.collect(Collectors.joining("\n"));
	}

	/**
	 * A low-cardinality value of each stopped observation called {@code name}, in order.
	 */
	private static List<String> values(Stopped stopped, String name, String keyName) {
		return stopped.contexts.stream()
			.filter((context) -> name.equals(context.getName()))
			.map((context) -> context.getLowCardinalityKeyValue(keyName).getValue())
			.toList();
	}

	/** Every observation context, in the order the observations stopped. */
	static final class Stopped implements ObservationHandler<Observation.Context> {

		final List<Observation.Context> contexts = new java.util.concurrent.CopyOnWriteArrayList<>();

		@Override
		public void onStop(Observation.Context context) {
			this.contexts.add(context);
		}

		@Override
		public boolean supportsContext(Observation.Context context) {
			return true;
		}

	}

	private static long currentToken() {
		return dev.distlock.LockContext.current().orElseThrow().fencingToken();
	}

	private static <T> T onOtherThread(java.util.function.Supplier<T> call) throws Exception {
		try {
			return CompletableFuture.supplyAsync(call, TestThreads.EACH).get(10, TimeUnit.SECONDS);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw ex;
		}
	}

	@Configuration(proxyBeanMethods = false)
	static class TestRegistry {

		@Bean
		Stopped stopped() {
			return new Stopped();
		}

		@Bean
		TestObservationRegistry observationRegistry(Stopped stopped) {
			TestObservationRegistry registry = TestObservationRegistry.create();
			registry.observationConfig().observationHandler(stopped);
			return registry;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserConvention {

		@Bean
		LockAcquireObservationConvention ordersConvention() {
			return new DefaultLockAcquireObservationConvention() {

				@Override
				public String getName() {
					return "orders.lock";
				}

				@Override
				public KeyValues getLowCardinalityKeyValues(LockObservationContext context) {
					return super.getLowCardinalityKeyValues(context).and("team", "orders");
				}

			};
		}

	}

}
