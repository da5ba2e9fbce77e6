package dev.distlock.aop;

import java.util.List;

import dev.distlock.OnFailure;
import dev.distlock.reactive.Acquisition;
import dev.distlock.reactive.DefaultReactiveLockTemplate;
import dev.distlock.support.DefaultLockTemplate;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.MethodParameter;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;

/**
 * A call of a {@link dev.distlock.DistributedLock} method that returns a reactive type
 * (anything Spring's {@link ReactiveAdapterRegistry} adapts: {@code Mono}, {@code Flux},
 * a Kotlin {@code Flow}...) or is a Kotlin suspend function (which Spring AOP hands to
 * the advice as a {@code Publisher}), through the {@link DefaultReactiveLockTemplate}:
 * nothing happens until subscription; then the lock is taken without blocking, the method
 * is invoked only once it is held, and the lease is held until the returned work
 * completes, fails or is cancelled, and released once. Loaded only with Reactor on the
 * class path.
 */
final class ReactiveLockedCall {

	private static final String FLOW = "kotlinx.coroutines.flow.Flow";

	private final DefaultReactiveLockTemplate reactive;

	ReactiveLockedCall(DefaultLockTemplate template) {
		this.reactive = new DefaultReactiveLockTemplate(template);
	}

	@Nullable Object call(MethodInvocation invocation, LockOperation operation, List<String> keys) {
		Acquisition acquisition = operation.multiKey() ? this.reactive.lockAll(keys, operation.options())
				: this.reactive.lock(keys.get(0), operation.options());
		if (operation.onFailure() == OnFailure.SKIP) {
			acquisition = acquisition.orSkip();
		}
		if (operation.result() == LockOperation.Result.SUSPEND) {
			// What the proxy turns back into the suspend function's result.
			if (FLOW.equals(new MethodParameter(operation.method(), -1).getParameterType().getName())) {
				return this.reactive.holding(acquisition, () -> publisher(invocation, null));
			}
			return this.reactive.holdingMono(acquisition, () -> Mono.from(publisher(invocation, null)));
		}
		ReactiveAdapter adapter = adapter(operation);
		if (adapter.isMultiValue()) {
			Flux<Object> flux = this.reactive.holding(acquisition, () -> publisher(invocation, adapter));
			return adapter.fromPublisher(flux);
		}
		Mono<Object> mono = this.reactive.holdingMono(acquisition, () -> Mono.from(publisher(invocation, adapter)));
		return adapter.fromPublisher(mono);
	}

	/** A failure before anything was invoked (an invalid key), as the method's type. */
	static Object failed(LockOperation operation, RuntimeException failure) {
		if (operation.result() == LockOperation.Result.SUSPEND) {
			return Mono.error(failure);
		}
		return adapter(operation).fromPublisher(Mono.error(failure));
	}

	private static ReactiveAdapter adapter(LockOperation operation) {
		ReactiveAdapter adapter = ReactiveAdapterRegistry.getSharedInstance()
			.getAdapter(operation.method().getReturnType());
		if (adapter == null) {
			throw new IllegalStateException("No reactive adapter for the result of " + operation.description());
		}
		return adapter;
	}

	/**
	 * Invokes the method, on this subscription's own copy of the invocation, and its
	 * result as a publisher; the method's own exception fails the subscription unchanged.
	 */
	@SuppressWarnings("unchecked")
	private static Publisher<Object> publisher(MethodInvocation invocation, @Nullable ReactiveAdapter adapter) {
		Object result;
		try {
			result = AsyncLockedCall.invocable(invocation).proceed();
		}
		catch (Throwable ex) {
			throw ReactiveLockedCall.<RuntimeException>rethrow(ex);
		}
		if (adapter != null) {
			return (Publisher<Object>) adapter.toPublisher(result);
		}
		return (result != null) ? (Publisher<Object>) result : Mono.empty();
	}

	/** Throws {@code failure} as it is, checked or not, for Reactor to signal. */
	@SuppressWarnings("unchecked")
	private static <E extends Throwable> E rethrow(Throwable failure) throws E {
		throw (E) failure;
	}

}
