package dev.distlock.aop;

import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import dev.distlock.DistributedLock;
import dev.distlock.LockMode;
import dev.distlock.OnFailure;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import kotlin.coroutines.Continuation;
import kotlinx.coroutines.CompletableDeferredKt;
import kotlinx.coroutines.Deferred;
import kotlinx.coroutines.flow.Flow;
import kotlinx.coroutines.flow.FlowKt;
import org.jetbrains.kotlin.cli.common.ExitCode;
import org.jetbrains.kotlin.cli.jvm.K2JVMCompiler;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A bad annotation fails the application at startup, naming the method and what is wrong.
 */
@Tag("server")
class DistributedLockStartupFailureTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class,
				DistributedLockRedisAutoConfiguration.class, DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + RedisServer.shared().port());

	@Test
	void keyThatDoesNotParse() {
		assertFails(BadSyntax.class, "BadSyntax.work", "not a valid SpEL expression");
	}

	@Test
	void nameWithoutConfiguredOptions() {
		assertFails(UnknownName.class, "UnknownName.work", "distributed-lock.locks.nope is not configured");
	}

	@Test
	void skipOnAMethodReturningAValue() {
		assertFails(SkipReturningInt.class, "SkipReturningInt.work", "onFailure = SKIP");
	}

	@Test
	void durationThatDoesNotParse() {
		assertFails(BadDuration.class, "BadDuration.work", "waitTime = \"soon\"");
	}

	@Test
	void zeroLeaseTime() {
		assertFails(ZeroLease.class, "ZeroLease.work", "must be positive");
	}

	@Test
	void plainFutureReturnType() {
		assertFails(AsyncResult.class, "AsyncResult.work", "a plain Future does not tell anyone");
	}

	/** Results held until their work ends start without complaint. */
	@Test
	void asynchronousAndReactiveReturnTypesStart() {
		this.runner.withUserConfiguration(Config.class)
			.withBean(StageResult.class)
			.withBean(MonoResult.class)
			.withBean(FluxResult.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	@Test
	void kotlinSuspendFunctionWithoutCoroutinesReactor() {
		assertFails(SuspendFunction.class, "SuspendFunction.work", "is a Kotlin suspend function");
		assertFails(SuspendFunction.class, "SuspendFunction.work", "kotlinx-coroutines-reactor");
	}

	@Test
	void kotlinFlowReturnTypeWithoutCoroutinesReactor() {
		assertFails(FlowResult.class, "FlowResult.work", "returns kotlinx.coroutines.flow.Flow");
		assertFails(FlowResult.class, "FlowResult.work", "kotlinx-coroutines-reactor");
	}

	/**
	 * The same two cases from Kotlin source, compiled at test time by the Kotlin compiler
	 * as a user's build would compile it: this checks that the Java stand-ins of the two
	 * tests above ({@link SuspendFunction}, {@link FlowResult}) are what kotlinc makes.
	 * Running the compiler takes 30 to 90 s on a loaded 2-core machine, so this runs with
	 * {@code -Psoak} ({@code -Ddistlock.soak=true}); the stand-ins run by default.
	 */
	@Test
	@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
	void kotlinSourceCompiledByKotlinc(@TempDir Path classes) throws Exception {
		ClassLoader loader = compileKotlin(classes, """
				package compiled

				import dev.distlock.DistributedLock
				import kotlinx.coroutines.flow.Flow
				import kotlinx.coroutines.flow.flowOf

				open class SuspendingService {
					@DistributedLock(key = "#key")
					open suspend fun work(key: String): String = key
				}

				open class FlowService {
					@DistributedLock(key = "#key")
					open fun work(key: String): Flow<String> = flowOf(key)
				}
				""");
		assertFails(loader, loader.loadClass("compiled.SuspendingService"), "SuspendingService.work",
				"is a Kotlin suspend function");
		assertFails(loader, loader.loadClass("compiled.FlowService"), "FlowService.work",
				"returns kotlinx.coroutines.flow.Flow");
	}

	private static ClassLoader compileKotlin(Path classes, String source) throws Exception {
		Path file = Files.writeString(classes.resolve("Services.kt"), source);
		String classPath = String.join(java.io.File.pathSeparator, location(DistributedLock.class),
				location(kotlin.Unit.class), location(Flow.class));
		ExitCode status = new K2JVMCompiler().exec(System.err, "-no-stdlib", "-no-reflect", "-java-parameters",
				"-jvm-target", "17", "-classpath", classPath, "-d", classes.toString(), file.toString());
		assertThat(status).as("kotlinc").isEqualTo(ExitCode.OK);
		return new URLClassLoader(new URL[] { classes.toUri().toURL() },
				DistributedLockStartupFailureTests.class.getClassLoader());
	}

	private static String location(Class<?> type) throws URISyntaxException {
		return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
	}

	@Test
	void kotlinDeferredReturnType() {
		assertFails(DeferredResult.class, "DeferredResult.work", "returns kotlinx.coroutines.Deferred");
	}

	/**
	 * The read lock is declared on a superclass, so the proxy meets the plain method
	 * first: the error must still come out as it is, naming the method, the store and the
	 * capability, not as the proxy's "Unexpected AOP exception".
	 */
	@Test
	void aReadLockOnAStoreWithoutReadLocksFailsNamingTheMethodTheStoreAndTheCapability() {
		this.runner.withUserConfiguration(Config.class, PlainStore.class).withBean(Catalog.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).isInstanceOf(LockDeclarationException.class)
				.hasMessageContaining("Catalog.read()")
				.hasMessageContaining("the plain store does not")
				.hasMessageContaining("lock kind SHARED");
			assertThat(((LockDeclarationException) context.getStartupFailure()).reason())
				.isEqualTo(LockDeclarationException.Reason.UNSUPPORTED_BY_STORE);
		});
	}

	@Test
	void placeholderDurationsResolve() {
		this.runner.withPropertyValues("app.lock-wait=250ms")
			.withUserConfiguration(Placeholder.class)
			.run((context) -> assertThat(context).hasNotFailed());
	}

	private void assertFails(Class<?> bean, String method, String reason) {
		assertFails(getClass().getClassLoader(), bean, method, reason);
	}

	private void assertFails(ClassLoader loader, Class<?> bean, String method, String reason) {
		this.runner.withClassLoader(loader).withUserConfiguration(Config.class).withBean(bean).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(lockError(context.getStartupFailure())).hasMessageContaining(method)
				.hasMessageContaining(reason);
		});
	}

	/** The error distlock raised, wherever the container wrapped it. */
	private static Throwable lockError(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof IllegalStateException && cause.getMessage().contains("@DistributedLock")) {
				return cause;
			}
		}
		throw new AssertionError("No @DistributedLock error in the startup failure", failure);
	}

	@Configuration(proxyBeanMethods = false)
	static class Config {

	}

	@Configuration(proxyBeanMethods = false)
	static class PlainStore {

		@Bean
		LockProvider plainLockProvider() {
			InMemoryLockProvider memory = new InMemoryLockProvider();
			return new LockProvider() {

				@Override
				public CompletionStage<LockAttempt> tryLock(LockRequest request) {
					return memory.tryLock(LockRequest.exclusive(request.key(), request.leaseTime()));
				}

				@Override
				public String storeName() {
					return "plain";
				}

			};
		}

	}

	static class ReadingCatalog {

		@DistributedLock(key = "#id", mode = LockMode.READ)
		public void read(String id) {
		}

	}

	static class Catalog extends ReadingCatalog {

		@DistributedLock(key = "#id")
		public void write(String id) {
		}

	}

	static class BadSyntax {

		@DistributedLock(key = "#id +")
		public void work(String id) {
		}

	}

	static class UnknownName {

		@DistributedLock(key = "#id", name = "nope")
		public void work(String id) {
		}

	}

	static class SkipReturningInt {

		@DistributedLock(key = "#id", onFailure = OnFailure.SKIP)
		public int work(String id) {
			return 1;
		}

	}

	static class BadDuration {

		@DistributedLock(key = "#id", waitTime = "soon")
		public void work(String id) {
		}

	}

	static class ZeroLease {

		@DistributedLock(key = "#id", leaseTime = "0s")
		public void work(String id) {
		}

	}

	static class AsyncResult {

		@DistributedLock(key = "#id")
		public Future<String> work(String id) {
			return CompletableFuture.completedFuture(id);
		}

	}

	static class StageResult {

		@DistributedLock(key = "#id")
		public CompletionStage<String> work(String id) {
			return CompletableFuture.completedFuture(id);
		}

	}

	static class MonoResult {

		@DistributedLock(key = "#id")
		public Mono<String> work(String id) {
			return Mono.just(id);
		}

	}

	static class FluxResult {

		@DistributedLock(key = "#id")
		public Flux<String> work(String id) {
			return Flux.just(id);
		}

	}

	/**
	 * {@code suspend fun work(key: String): Any} as kotlinc compiles it: the same method
	 * with a trailing {@link Continuation} parameter, returning {@code Object} (the
	 * result, or a marker that the function suspended). Declared in Java so that the
	 * check runs without the Kotlin compiler; {@link #kotlinSourceCompiledByKotlinc}
	 * shows that kotlinc emits exactly this.
	 */
	static class SuspendFunction {

		@DistributedLock(key = "#key")
		public Object work(String key, Continuation<? super Object> continuation) {
			return key;
		}

	}

	static class FlowResult {

		@DistributedLock(key = "#key")
		public Flow<String> work(String key) {
			return FlowKt.flowOf(key);
		}

	}

	static class DeferredResult {

		@DistributedLock(key = "#key")
		public Deferred<String> work(String key) {
			return CompletableDeferredKt.CompletableDeferred(key);
		}

	}

	static class Placeholder {

		@DistributedLock(key = "#id", waitTime = "${app.lock-wait}")
		public void work(String id) {
		}

		@Bean
		static String unused() {
			return "";
		}

	}

}
