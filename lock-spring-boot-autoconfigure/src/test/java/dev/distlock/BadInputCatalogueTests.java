package dev.distlock;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The bad-input catalogue: each case gets a clear error that names what is wrong (at
 * startup where it can be known then), and leaves nothing locked. Startup failures of
 * annotations and configuration properties that existed before are in
 * {@code DistributedLockStartupFailureTests} and
 * {@code DistributedLockAutoConfigurationTests}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(OutputCaptureExtension.class)
@Tag("server")
class BadInputCatalogueTests {

	private static final StringRedisTemplate redis = new StringRedisTemplate(
			TestRedis.connectionFactory(RedisServer.shared()));

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + RedisServer.shared().port(),
				"distributed-lock.redis.key-prefix=bad:");

	// Key expressions, at startup

	@Test
	void anUnknownParameterNameFailsStartup() {
		assertStartupFails(UnknownParameter.class, "uses #orderId, which is not a parameter", "parameter names: id");
	}

	@Test
	void aParameterNameInCodeCompiledWithoutParametersFailsStartupWithAHintToUseP0(@TempDir Path classes)
			throws Exception {
		ClassLoader loader = compileWithoutParameterNames(classes, "NoNames", """
				package compiled;

				public class NoNames {

					@dev.distlock.DistributedLock(key = "#orderId")
					public void work(String orderId) {
					}

				}
				""");
		this.runner.withClassLoader(loader).withBean(loader.loadClass("compiled.NoNames")).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).hasStackTraceContaining("NoNames.work")
				.hasStackTraceContaining("uses #orderId, which is not a parameter")
				.hasStackTraceContaining("none: compile with -parameters")
				.hasStackTraceContaining("#p0");
		});
	}

	@Test
	void aPositionalKeyWorksInCodeCompiledWithoutParameters(@TempDir Path classes) throws Exception {
		ClassLoader loader = compileWithoutParameterNames(classes, "ByPosition", """
				package compiled;

				public class ByPosition {

					@dev.distlock.DistributedLock(key = "#p0")
					public String work(String orderId) {
						return dev.distlock.LockContext.current().map((lease) -> lease.key()).orElse("none");
					}

				}
				""");
		Class<?> type = loader.loadClass("compiled.ByPosition");
		assertThat(type.getMethod("work", String.class).getParameters()[0].isNamePresent()).isFalse();
		this.runner.withClassLoader(loader).withBean(type).run((context) -> {
			Object bean = context.getBean(type);
			assertThat(type.getMethod("work", String.class).invoke(bean, "o-7")).isEqualTo("o-7");
		});
	}

	/** Compiles one class as a build without {@code -parameters} would. */
	private static ClassLoader compileWithoutParameterNames(Path classes, String name, String source) throws Exception {
		Path file = Files.createDirectories(classes.resolve("compiled")).resolve(name + ".java");
		Files.writeString(file, source);
		JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
		String classPath = Path.of(DistributedLock.class.getProtectionDomain().getCodeSource().getLocation().toURI())
			.toString();
		int status = compiler.run(null, null, null, "-g:none", "-classpath", classPath, "-d", classes.toString(),
				file.toString());
		assertThat(status).as("javac").isZero();
		return new URLClassLoader(new URL[] { classes.toUri().toURL() }, BadInputCatalogueTests.class.getClassLoader());
	}

	@Test
	void anEmptyKeyAttributeFailsStartup() {
		assertStartupFails(EmptyKey.class, "EmptyKey.work()", "has an empty key");
	}

	@Test
	void aPositionBeyondTheParametersFailsStartup() {
		assertStartupFails(PositionOutOfRange.class, "uses #p3, which is not a parameter");
	}

	@Test
	void aNegativeNamedRetryIntervalFailsStartup() {
		this.runner.withPropertyValues("distributed-lock.locks.x.retry-interval=-1s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("distributed-lock.locks.x.retry-interval"));
	}

	@Test
	void aWaitTimeThatIsNotADurationFailsStartupNamingTheProperty() {
		this.runner.withPropertyValues("distributed-lock.wait-time=soon")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.hasStackTraceContaining("distributed-lock.wait-time")
				.hasStackTraceContaining("soon"));
	}

	/**
	 * Not bad input: a waiter never sleeps past the holder's remaining lease or its own
	 * wait deadline, so a retry interval longer than either costs nothing.
	 */
	@Test
	void aRetryIntervalLongerThanTheLeaseAndTheWaitIsAcceptedAndCostsNothing() {
		this.runner
			.withPropertyValues("distributed-lock.retry-interval=1m", "distributed-lock.lease-time=1s",
					"distributed-lock.wait-time=20s")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				String key = "long-retry-" + UUID.randomUUID();
				try (RedisLockProvider crashed = new RedisLockProvider(redis.getConnectionFactory(), "bad:", false)) {
					assertThat(LockAttempt.join(crashed.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(1)))))
						.isInstanceOf(dev.distlock.spi.LockAttempt.Acquired.class);
				}
				long start = System.nanoTime();
				try (Lease lease = context.getBean(LockTemplate.class).acquire(key, LockOptions.defaults())) {
					assertThat(lease.isHeld()).isTrue();
				}
				assertThat(Duration.ofNanos(System.nanoTime() - start)).as("taken once the 1s lease ran out")
					.isLessThan(Duration.ofSeconds(5));
				try (RedisLockProvider other = new RedisLockProvider(redis.getConnectionFactory(), "bad:", false)) {
					LockAttempt.join(other.tryLock(LockRequest.exclusive(key + "-busy", Duration.ofSeconds(30))));
				}
				long waitStart = System.nanoTime();
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> context.getBean(LockTemplate.class)
						.acquire(key + "-busy", LockOptions.builder().waitTime(Duration.ofMillis(300)).build()));
				assertThat(Duration.ofNanos(System.nanoTime() - waitStart)).as("a 300ms wait ends at its deadline")
					.isLessThan(Duration.ofSeconds(2));
				redis.delete("bad:" + key + "-busy");
			});
	}

	// Key values, per call

	@Test
	void aCollectionKeyIsRejectedAndTheMethodNotInvoked() {
		run((context) -> {
			Keys keys = context.getBean(Keys.class);
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> keys.list(List.of("a", "b")))
				.withMessageContaining("evaluated to a java.util.")
				.withMessageContaining("a key must be a string, number");
			assertThat(keys.calls()).isZero();
		});
	}

	@Test
	void anObjectKeyIsRejectedAndTheMethodNotInvoked() {
		run((context) -> {
			Keys keys = context.getBean(Keys.class);
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> keys.object(new Object()))
				.withMessageContaining("evaluated to a java.lang.Object");
			assertThat(keys.calls()).isZero();
		});
	}

	@Test
	void numbersEnumsAndUuidsMakeKeys() {
		run((context) -> {
			Keys keys = context.getBean(Keys.class);
			assertThat(keys.number(42)).isEqualTo("bad:42");
			assertThat(keys.enumKey(TimeUnit.SECONDS)).isEqualTo("bad:SECONDS");
			UUID id = UUID.randomUUID();
			assertThat(keys.uuid(id)).isEqualTo("bad:" + id);
		});
	}

	@Test
	void emptyAndWhitespaceKeysAreRejected() {
		run((context) -> {
			Keys keys = context.getBean(Keys.class);
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> keys.text(""))
				.withMessageContaining("evaluated to a blank string");
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(() -> keys.text(" \t "))
				.withMessageContaining("evaluated to a blank string");
			assertThat(keys.calls()).isZero();
		});
	}

	@Test
	void constructorsInKeysAreRefusedByDefault() {
		run((context) -> {
			Keys keys = context.getBean(Keys.class);
			assertThatExceptionOfType(IllegalArgumentException.class).isThrownBy(keys::constructor)
				.withMessageContaining("could not be evaluated")
				.withMessageContaining("java.lang.StringBuilder");
			assertThat(keys.calls()).isZero();
		});
	}

	@Test
	void typeReferencesWorkWhenTheApplicationOptsIn() {
		this.runner.withPropertyValues("distributed-lock.allow-type-references-in-keys=true")
			.withBean(Keys.class)
			.run((context) -> assertThat(context.getBean(Keys.class).typeReference("x")).isEqualTo("bad:X"));
	}

	@Test
	void aHugeKeyIsRejectedAndNothingIsLocked() {
		run((context) -> {
			String huge = "k".repeat(5000);
			assertThatExceptionOfType(IllegalArgumentException.class)
				.isThrownBy(() -> context.getBean(LockTemplate.class).run(huge, () -> {
				}))
				.withMessageContaining("5000 characters long, more than 1024");
			assertThat(redis.hasKey("bad:" + huge)).isFalse();
		});
	}

	@Test
	void bracesColonsAndNonAsciiAreKeptAsTheyAre() {
		run((context) -> {
			String key = "{tenant-7}:order:Bestellung-ü-€-" + UUID.randomUUID();
			try (Lease lease = context.getBean(LockTemplate.class).acquire(key, LockOptions.defaults())) {
				assertThat(redis.hasKey("bad:" + key)).isTrue();
			}
			assertThat(redis.hasKey("bad:" + key)).isFalse();
		});
	}

	// The caller

	@Test
	void anAlreadyInterruptedCallerGetsAnAcquisitionErrorAndNothingIsLocked() {
		run((context) -> {
			String key = "interrupted-" + UUID.randomUUID();
			Thread.currentThread().interrupt();
			try {
				assertThatExceptionOfType(LockAcquisitionException.class)
					.isThrownBy(() -> context.getBean(LockTemplate.class).acquire(key, LockOptions.defaults()))
					.withMessageContaining("Interrupted");
				assertThat(Thread.currentThread().isInterrupted()).as("interrupt flag kept").isTrue();
			}
			finally {
				Thread.interrupted();
			}
			assertThat(redis.hasKey("bad:" + key)).isFalse();
		});
	}

	@Test
	void aLeaseReleasedFromAnotherThreadIsReleased() {
		run((context) -> {
			String key = "released-" + UUID.randomUUID();
			Lease lease = context.getBean(LockTemplate.class).acquire(key, LockOptions.defaults());
			CompletableFuture.runAsync(lease::release, TestThreads.EACH).get(10, TimeUnit.SECONDS);
			assertThat(lease.isHeld()).isFalse();
			assertThat(redis.hasKey("bad:" + key)).isFalse();
		});
	}

	@Test
	void aLeaseReleasedTwiceLeavesTheNextHoldersLockAlone() {
		run((context) -> {
			String key = "twice-" + UUID.randomUUID();
			Lease lease = context.getBean(LockTemplate.class).acquire(key, LockOptions.defaults());
			lease.release();
			try (RedisLockProvider elsewhere = new RedisLockProvider(redis.getConnectionFactory(), "bad:", false)) {
				assertThat(LockAttempt.join(elsewhere.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30)))))
					.isInstanceOf(dev.distlock.spi.LockAttempt.Acquired.class);
				lease.release();
				lease.close();
				assertThat(lease.isHeld()).isFalse();
				assertThat(redis.hasKey("bad:" + key)).as("the next holder's lock").isTrue();
			}
			finally {
				redis.delete("bad:" + key);
			}
		});
	}

	@Test
	void shuttingDownWhileHoldingReleasesTheLockAndStopsRenewal() {
		String key = "shutdown-" + UUID.randomUUID();
		this.runner.run((context) -> {
			context.getBean(LockTemplate.class).acquire(key, LockOptions.defaults());
			assertThat(redis.hasKey("bad:" + key)).isTrue();
			RenewalScheduler scheduler = context.getBean(RenewalScheduler.class);
			((ConfigurableApplicationContext) context.getSourceApplicationContext()).close();
			assertThat(redis.hasKey("bad:" + key)).as("lock after the context closed").isFalse();
			assertThat(scheduler.pendingTasks()).isZero();
		});
	}

	// The store

	@Test
	void redisDownAtStartupDoesNotStopTheApplicationAndACallFailsInBoundedTime() {
		RedisServer gone = RedisServer.start();
		int port = gone.port();
		gone.close();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port)
			.run((context) -> {
				assertThat(context).hasNotFailed();
				long start = System.nanoTime();
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> context.getBean(LockTemplate.class).tryAcquire("down", LockOptions.defaults()))
					.withMessageContaining("down");
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
			});
	}

	@Test
	void redisDownAtStartupShowsInTheRedisHealthIndicatorWhileTheApplicationRuns() {
		RedisServer gone = RedisServer.start();
		int port = gone.port();
		gone.close();
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
					DataRedisHealthContributorAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
					DistributedLockAutoConfiguration.class))
			// Short client timeouts for Boot's own health indicator, which calls Redis
			// with
			// the client's timeout; distlock's calls are bounded by store-timeout anyway.
			.withPropertyValues("spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + port,
					"spring.data.redis.timeout=500ms", "spring.data.redis.connect-timeout=500ms")
			.run((context) -> {
				assertThat(context).hasNotFailed().hasSingleBean(LockTemplate.class);
				long start = System.nanoTime();
				Health health = context.getBean("redisHealthContributor", HealthIndicator.class).health(true);
				assertThat(health.getStatus()).isEqualTo(Status.DOWN);
				assertThat(health.getDetails()).containsKey("error");
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
			});
	}

	@Test
	void redisKilledWhileAnAnnotatedMethodRunsEndsTheCallInBoundedTime(CapturedOutput output) {
		try (RedisServer server = RedisServer.start()) {
			this.runner.withPropertyValues("spring.data.redis.port=" + server.port())
				.withBean(Crashes.class)
				.run((context) -> {
					long start = System.nanoTime();
					assertThat(context.getBean(Crashes.class).killRedisAndReturn("mid-call", server)).isEqualTo("done");
					assertThat(Duration.ofNanos(System.nanoTime() - start))
						.as("the call, with the client's default 60s command timeout")
						.isLessThan(Duration.ofSeconds(10));
					assertThat(output)
						.contains("Could not release lock 'mid-call'; it expires when its lease runs out");
				});
		}
	}

	@Test
	void redisKilledWhileACallerWaitsFailsTheWaitWithABackendErrorInBoundedTime() {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory elsewhere = TestRedis.connectionFactory(server, Duration.ofSeconds(1));
			try (RedisLockProvider holder = new RedisLockProvider(elsewhere, "bad:", false)) {
				assertThat(
						LockAttempt.join(holder.tryLock(LockRequest.exclusive("wait-killed", Duration.ofSeconds(30)))))
					.isInstanceOf(dev.distlock.spi.LockAttempt.Acquired.class);
				this.runner.withPropertyValues("spring.data.redis.port=" + server.port()).run((context) -> {
					CompletableFuture<Lease> waiter = CompletableFuture.supplyAsync(
							() -> context.getBean(LockTemplate.class)
								.acquire("wait-killed", LockOptions.builder().waitTime(Duration.ofSeconds(30)).build()),
							TestThreads.EACH);
					Conditions.await("the waiter waits", Duration.ofSeconds(10),
							() -> TestRedis.mutexWaited(server.command("GET", "bad:wait-killed")));
					long start = System.nanoTime();
					server.kill();
					assertThatExceptionOfType(java.util.concurrent.CompletionException.class).isThrownBy(waiter::join)
						.havingCause()
						.isInstanceOf(LockBackendException.class)
						.withMessageContaining("wait-killed");
					assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the failed wait, of 30s")
						.isLessThan(Duration.ofSeconds(10));
				});
			}
			finally {
				elsewhere.destroy();
			}
		}
	}

	@Test
	void aScriptCacheFlushedUnderneathIsReloaded() {
		try (RedisServer server = RedisServer.start()) {
			LettuceConnectionFactory factory = TestRedis.connectionFactory(server);
			try (RenewalScheduler scheduler = new RenewalScheduler()) {
				DefaultLockTemplate template = TestRedis.template(factory, scheduler);
				template.run("flushed", () -> {
				});
				assertThat(server.command("SCRIPT", "FLUSH")).isEqualTo("+OK");
				try (Lease lease = template.acquire("flushed", LockOptions.defaults())) {
					assertThat(lease.isHeld()).isTrue();
				}
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aReadOnlyReplicaGivesABackendErrorNamingIt() {
		try (RedisServer master = RedisServer.start();
				RedisServer replica = RedisServer.start("--replicaof", master.host(),
						Integer.toString(master.port()))) {
			LettuceConnectionFactory factory = TestRedis.connectionFactory(replica);
			try (RedisLockProvider provider = new RedisLockProvider(factory, "bad:", false)) {
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> LockAttempt
						.join(provider.tryLock(LockRequest.exclusive("on-replica", Duration.ofSeconds(5)))))
					.withMessageContaining("on-replica")
					.withMessageContaining("READONLY");
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aUserWithoutTheRightToRunScriptsGetsABackendErrorNamingIt() {
		try (RedisServer server = RedisServer.start()) {
			assertThat(server.command("ACL", "SETUSER", "app", "on", ">secret", "~*", "+@all", "-evalsha", "-eval"))
				.isEqualTo("+OK");
			RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(server.host(), server.port());
			configuration.setUsername("app");
			configuration.setPassword("secret");
			LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
					LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
			factory.afterPropertiesSet();
			factory.start();
			try (RedisLockProvider provider = new RedisLockProvider(factory, "bad:", false)) {
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> LockAttempt
						.join(provider.tryLock(LockRequest.exclusive("no-scripts", Duration.ofSeconds(5)))))
					.withMessageContaining("no-scripts")
					.withMessageContaining("NOPERM");
				assertThat(server.command("EXISTS", "bad:no-scripts")).isEqualTo(":0");
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void aUserWhoMayNotPublishStillReleasesTheLockAndAWaiterGetsItByPolling(CapturedOutput output) {
		try (RedisServer server = RedisServer.start()) {
			assertThat(server.command("ACL", "SETUSER", "app", "on", ">secret", "~*", "+@all", "-publish"))
				.isEqualTo("+OK");
			LettuceConnectionFactory restricted = userConnectionFactory(server, "app");
			LettuceConnectionFactory full = TestRedis.connectionFactory(server);
			try (RenewalScheduler scheduler = new RenewalScheduler();
					RedisLockProvider holderProvider = new RedisLockProvider(restricted, "bad:", false);
					RedisLockProvider waiterProvider = new RedisLockProvider(full, "bad:", false)) {
				DefaultLockTemplate holder = new DefaultLockTemplate(holderProvider, scheduler, TEMPLATE_DEFAULTS);
				DefaultLockTemplate waiter = new DefaultLockTemplate(waiterProvider, scheduler, TEMPLATE_DEFAULTS);
				for (int round = 0; round < 3; round++) {
					Lease lease = holder.acquire("no-publish", LockOptions.defaults());
					CompletableFuture<Long> next = takeAndRelease(waiter, "no-publish");
					Conditions.await("the waiter marked the lock", Duration.ofSeconds(10),
							() -> TestRedis.mutexWaited(server.command("GET", "bad:no-publish")));
					lease.release();
					long released = System.nanoTime();
					assertThat(lease.isHeld()).isFalse();
					assertThat(next.join()).isGreaterThan(lease.fencingToken());
					assertThat(Duration.ofNanos(System.nanoTime() - released))
						.as("taken by polling, long before the 30s lease")
						.isLessThan(Duration.ofSeconds(3));
				}
			}
			finally {
				restricted.destroy();
				full.destroy();
			}
		}
		assertThat(output.getOut()).contains("refused to publish the release signal on channel 'bad:released'");
		assertThat(occurrences(output.getOut(), "Further refusals are logged at debug level")).as("warnings").isOne();
	}

	@Test
	void aWaiterWhoMayNotSubscribeGetsTheLockByPollingAndTheFailureIsLoggedOnce(CapturedOutput output) {
		try (RedisServer server = RedisServer.start()) {
			assertThat(server.command("ACL", "SETUSER", "app", "on", ">secret", "~*", "+@all", "-subscribe",
					"-psubscribe"))
				.isEqualTo("+OK");
			LettuceConnectionFactory restricted = userConnectionFactory(server, "app");
			LettuceConnectionFactory full = TestRedis.connectionFactory(server);
			try (RenewalScheduler scheduler = new RenewalScheduler();
					RedisLockProvider holderProvider = new RedisLockProvider(full, "bad:", false);
					RedisLockProvider waiterProvider = new RedisLockProvider(restricted, "bad:", false)) {
				DefaultLockTemplate holder = new DefaultLockTemplate(holderProvider, scheduler, TEMPLATE_DEFAULTS);
				DefaultLockTemplate waiter = new DefaultLockTemplate(waiterProvider, scheduler, TEMPLATE_DEFAULTS);
				for (int round = 0; round < 4; round++) {
					Lease lease = holder.acquire("no-subscribe", LockOptions.defaults());
					CompletableFuture<Long> next = takeAndRelease(waiter, "no-subscribe");
					Conditions.await("the waiter marked the lock", Duration.ofSeconds(10),
							() -> TestRedis.mutexWaited(server.command("GET", "bad:no-subscribe")));
					if (round == 0) {
						Conditions.await("the refused subscription is reported", Duration.ofSeconds(10),
								() -> output.getOut().contains(REFUSED_SUBSCRIPTION));
					}
					lease.release();
					long released = System.nanoTime();
					assertThat(next.join()).isGreaterThan(lease.fencingToken());
					assertThat(Duration.ofNanos(System.nanoTime() - released)).as("taken by polling")
						.isLessThan(Duration.ofSeconds(3));
				}
				assertThat(waiterProvider.isListening()).isFalse();
			}
			finally {
				restricted.destroy();
				full.destroy();
			}
		}
		assertThat(output.getOut()).contains(REFUSED_SUBSCRIPTION + ": NOPERM");
		// Only this store's channel: an earlier test's store may still log its own.
		assertThat(occurrences(output.getOut(), REFUSED_SUBSCRIPTION)).as("warnings").isOne();
	}

	private static final String REFUSED_SUBSCRIPTION = "Could not subscribe to lock release channel 'bad:released'";

	/** Defaults of a template made by hand: 30s lease, 200ms retry interval. */
	private static final LockOptions TEMPLATE_DEFAULTS = LockOptions.builder()
		.waitTime(Duration.ZERO)
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(200))
		.build();

	/** Another caller that waits up to 20s for the lock, then releases it. */
	private static CompletableFuture<Long> takeAndRelease(LockTemplate template, String key) {
		return CompletableFuture.supplyAsync(() -> {
			try (Lease taken = template.acquire(key, LockOptions.builder().waitTime(Duration.ofSeconds(20)).build())) {
				return taken.fencingToken();
			}
		}, TestThreads.EACH);
	}

	private static int occurrences(String text, String part) {
		return text.split(java.util.regex.Pattern.quote(part), -1).length - 1;
	}

	private static LettuceConnectionFactory userConnectionFactory(RedisServer server, String user) {
		RedisStandaloneConfiguration configuration = new RedisStandaloneConfiguration(server.host(), server.port());
		configuration.setUsername(user);
		configuration.setPassword("secret");
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private void run(
			org.springframework.boot.test.context.runner.ContextConsumer<org.springframework.boot.test.context.assertj.AssertableApplicationContext> test) {
		this.runner.withBean(Keys.class).run(test);
	}

	private void assertStartupFails(Class<?> bean, String... reasons) {
		this.runner.withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (failure.getCause() != null && !(failure instanceof IllegalStateException
					&& failure.getMessage().contains("@DistributedLock"))) {
				failure = failure.getCause();
			}
			for (String reason : reasons) {
				assertThat(failure).hasMessageContaining(reason);
			}
			assertThat(context.getStartupFailure()).isInstanceOfAny(BeanCreationException.class,
					IllegalStateException.class);
		});
	}

	static class UnknownParameter {

		@DistributedLock(key = "#orderId")
		public void work(String id) {
		}

	}

	static class EmptyKey {

		@DistributedLock(key = " ")
		public void work(String id) {
		}

	}

	static class PositionOutOfRange {

		@DistributedLock(key = "#p3")
		public void work(String id) {
		}

	}

	static class Crashes {

		@DistributedLock(key = "#key")
		public String killRedisAndReturn(String key, RedisServer server) {
			server.kill();
			return "done";
		}

	}

	/** Methods that return the Redis key they ran under. */
	static class Keys {

		private final AtomicInteger calls = new AtomicInteger();

		public int calls() {
			return this.calls.get();
		}

		@DistributedLock(key = "#values")
		public void list(List<String> values) {
			this.calls.incrementAndGet();
		}

		@DistributedLock(key = "#value")
		public void object(Object value) {
			this.calls.incrementAndGet();
		}

		@DistributedLock(key = "#value")
		public void text(String value) {
			this.calls.incrementAndGet();
		}

		@DistributedLock(key = "new java.lang.StringBuilder('x').toString()")
		public void constructor() {
			this.calls.incrementAndGet();
		}

		@DistributedLock(key = "T(java.lang.String).valueOf(#value).toUpperCase()")
		public String typeReference(String value) {
			return current();
		}

		@DistributedLock(key = "#value")
		public String number(int value) {
			return current();
		}

		@DistributedLock(key = "#value")
		public String enumKey(TimeUnit value) {
			return current();
		}

		@DistributedLock(key = "#value")
		public String uuid(UUID value) {
			return current();
		}

		private static String current() {
			return LockContext.current().map((held) -> "bad:" + held.key()).orElse("none");
		}

	}

}
