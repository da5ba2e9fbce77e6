package dev.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;

import org.jspecify.annotations.Nullable;

import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.core.ResolvableType;
import org.springframework.util.ClassUtils;

/**
 * Which asynchronous results a {@link dev.distlock.DistributedLock} method may have, and
 * why the others cannot be locked, decided once per method at startup. Reactive and
 * Kotlin types are recognised by name, so neither Reactor nor Kotlin is needed on the
 * class path.
 */
final class AsyncReturnTypes {

	private static final ClassLoader LOADER = AsyncReturnTypes.class.getClassLoader();

	/** The reactive path is built on Reactor. */
	static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Mono", LOADER);

	/**
	 * Spring AOP hands suspend functions to interceptors as a {@code Publisher}, and
	 * adapts {@code Flow} and {@code Deferred}, only with kotlinx-coroutines-reactor.
	 */
	static final boolean COROUTINES_REACTOR_PRESENT = ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", LOADER);

	/**
	 * Types whose value stands for work that goes on after the method returns: a reactive
	 * publisher, a Kotlin Flow (runs when collected), a coroutine Job or Deferred.
	 */
	private static final List<String> ASYNC_TYPE_NAMES = List.of("org.reactivestreams.Publisher",
			"kotlinx.coroutines.flow.Flow", "kotlinx.coroutines.Job");

	private AsyncReturnTypes() {
	}

	/**
	 * How {@code method} delivers its result.
	 * @throws LockDeclarationException when the method's result cannot be held until its
	 * work completes
	 */
	static LockOperation.Result of(Method method, String description) {
		if (KotlinDetector.isSuspendingFunction(method)) {
			if (!COROUTINES_REACTOR_PRESENT) {
				throw LockOperationSource.invalid(description, "@DistributedLock on " + description
						+ " is a Kotlin suspend function: locking one needs kotlinx-coroutines-reactor"
						+ " (org.jetbrains.kotlinx:kotlinx-coroutines-reactor) on the class path, through which"
						+ " Spring hands suspend functions to the lock advice as a Publisher; add it, or lock a method"
						+ " that does not suspend", null);
			}
			return LockOperation.Result.SUSPEND;
		}
		Class<?> type = method.getReturnType();
		if (CompletionStage.class.isAssignableFrom(type)) {
			if (!type.isAssignableFrom(CompletableFuture.class)) {
				throw LockOperationSource.invalid(description,
						"@DistributedLock on " + description + " returns " + type.getName()
								+ ": a locked asynchronous method returns CompletionStage or"
								+ " CompletableFuture, which the lock completes once it has released the lock",
						null);
			}
			return LockOperation.Result.COMPLETION_STAGE;
		}
		if (Future.class.isAssignableFrom(type)) {
			throw LockOperationSource.invalid(description,
					"@DistributedLock on " + description + " returns " + type.getName()
							+ ": a plain Future does not tell anyone when its work completes, so the lock"
							+ " could not be released then; return CompletableFuture or CompletionStage instead",
					null);
		}
		if (REACTOR_PRESENT && Reactive.adapted(type)) {
			return LockOperation.Result.PUBLISHER;
		}
		if (isAsyncType(type)) {
			throw LockOperationSource.invalid(description,
					"@DistributedLock on " + description + " returns " + type.getName() + ": " + missing(type), null);
		}
		return LockOperation.Result.RETURNED;
	}

	/** Why an asynchronous type cannot be locked here. */
	private static String missing(Class<?> type) {
		if (!REACTOR_PRESENT) {
			return "locking a reactive or coroutine result needs Reactor (io.projectreactor:reactor-core) on the"
					+ " class path, since the lock would otherwise be released before the work completes";
		}
		if (type.getName().startsWith("kotlinx.coroutines") && !COROUTINES_REACTOR_PRESENT) {
			return "locking a Kotlin Flow or Deferred needs kotlinx-coroutines-reactor"
					+ " (org.jetbrains.kotlinx:kotlinx-coroutines-reactor) on the class path, through which Spring"
					+ " adapts it";
		}
		return "Spring's ReactiveAdapterRegistry does not adapt it, so the lock could not tell when its work"
				+ " completes (a coroutine Job has no result to wait for); return Mono, Flux, a Flow or a"
				+ " CompletableFuture";
	}

	/**
	 * Whether a skipped call completes with {@code Optional.empty()} rather than null.
	 */
	static boolean yieldsOptional(Method method, LockOperation.Result result) {
		if (result == LockOperation.Result.RETURNED) {
			return method.getReturnType() == Optional.class;
		}
		if (result == LockOperation.Result.SUSPEND) {
			return new MethodParameter(method, -1).getParameterType() == Optional.class;
		}
		@Nullable Class<?> element = ResolvableType.forMethodReturnType(method).getGeneric(0).resolve();
		return element == Optional.class;
	}

	/** Whether {@code type} is, extends or implements one of the asynchronous types. */
	static boolean isAsyncType(@Nullable Class<?> type) {
		if (type == null) {
			return false;
		}
		if (ASYNC_TYPE_NAMES.contains(type.getName()) || isAsyncType(type.getSuperclass())) {
			return true;
		}
		for (Class<?> implemented : type.getInterfaces()) {
			if (isAsyncType(implemented)) {
				return true;
			}
		}
		return false;
	}

	/** Loaded only with Reactor on the class path. */
	private static final class Reactive {

		static boolean adapted(Class<?> type) {
			return ReactiveAdapterRegistry.getSharedInstance().getAdapter(type) != null;
		}

	}

}
