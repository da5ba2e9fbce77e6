package dev.distlock.aop;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockTemplate;
import dev.distlock.MultiLease;
import dev.distlock.OnFailure;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.LeasedCall;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.framework.AopProxyUtils;

/**
 * Runs a {@link dev.distlock.DistributedLock} method holding its lock: evaluates the key,
 * acquires through the {@link LockTemplate} (or skips), and releases on every path
 * through {@link LeasedCall}; a method whose work ends after it returns (a
 * {@code CompletionStage}, a reactive type, a Kotlin suspend function) is held until that
 * work ends. Fails closed: when the lock is not acquired, or the key is invalid, the
 * method is not invoked.
 */
public final class DistributedLockInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(DistributedLockInterceptor.class);

	private final LockOperationSource source;

	private final LockKeyEvaluator evaluator;

	private final Supplier<LockTemplate> template;

	/**
	 * The template, looked up at the first call and kept: a lookup per call costs more
	 * than an in-memory lock.
	 */
	private volatile @Nullable LockTemplate resolved;

	private volatile @Nullable AsyncCalls asyncCalls;

	DistributedLockInterceptor(LockOperationSource source, LockKeyEvaluator evaluator,
			Supplier<LockTemplate> template) {
		this.source = source;
		this.evaluator = evaluator;
		this.template = template;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopProxyUtils.ultimateTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		LockOperation operation = this.source.getOperation(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		if (operation.result() != LockOperation.Result.RETURNED) {
			return invokeAsync(invocation, operation, target, targetClass);
		}
		if (operation.multiKey()) {
			return invokeMultiKey(invocation, operation, target, targetClass);
		}
		String key = this.evaluator.key(operation, invocation.getArguments(), target, targetClass);
		LockTemplate template = this.resolved;
		if (template == null) {
			template = this.template.get();
			this.resolved = template;
		}
		Lease lease;
		if (operation.onFailure() == OnFailure.SKIP) {
			Optional<Lease> acquired = template.tryAcquire(key, operation.options());
			if (acquired.isEmpty()) {
				if (logger.isDebugEnabled()) {
					logger.debug("Skipped " + operation.description() + ": lock '" + key + "' is held elsewhere");
				}
				return operation.returnsOptional() ? Optional.empty() : null;
			}
			lease = acquired.get();
		}
		else {
			lease = template.acquire(key, operation.options());
		}
		return LeasedCall.call(lease, invocation::proceed);
	}

	/**
	 * A method whose work ends after it returns: held until then, without blocking the
	 * caller ({@link AsyncLockedCall}, {@link ReactiveLockedCall}). An invalid key fails
	 * the result rather than the call.
	 */
	private @Nullable Object invokeAsync(MethodInvocation invocation, LockOperation operation, @Nullable Object target,
			Class<?> targetClass) {
		boolean stage = operation.result() == LockOperation.Result.COMPLETION_STAGE;
		List<String> keys;
		try {
			keys = operation.multiKey() ? this.evaluator.keys(operation, invocation.getArguments(), target, targetClass)
					: List.of(this.evaluator.key(operation, invocation.getArguments(), target, targetClass));
		}
		catch (RuntimeException ex) {
			return stage ? CompletableFuture.failedFuture(ex) : ReactiveLockedCall.failed(operation, ex);
		}
		AsyncCalls calls = this.asyncCalls;
		if (calls == null) {
			calls = new AsyncCalls(defaultTemplate(operation));
			this.asyncCalls = calls;
		}
		return stage ? calls.stages.call(invocation, operation, keys)
				: calls.reactive().call(invocation, operation, keys);
	}

	private DefaultLockTemplate defaultTemplate(LockOperation operation) {
		LockTemplate template = this.template.get();
		if (template instanceof DefaultLockTemplate library) {
			return library;
		}
		throw new IllegalStateException("@DistributedLock on " + operation.description()
				+ " returns its result asynchronously, which needs the library's own lock template;"
				+ " the application's LockTemplate bean is a " + template.getClass().getName());
	}

	/** The asynchronous paths, made at the first asynchronous call. */
	private static final class AsyncCalls {

		final AsyncLockedCall stages;

		private final DefaultLockTemplate template;

		private volatile @Nullable ReactiveLockedCall reactive;

		AsyncCalls(DefaultLockTemplate template) {
			this.template = template;
			this.stages = new AsyncLockedCall(template);
		}

		/** Made only once a reactive method is called: Reactor is then present. */
		ReactiveLockedCall reactive() {
			ReactiveLockedCall call = this.reactive;
			if (call == null) {
				call = new ReactiveLockedCall(this.template);
				this.reactive = call;
			}
			return call;
		}

	}

	private @Nullable Object invokeMultiKey(MethodInvocation invocation, LockOperation operation,
			@Nullable Object target, Class<?> targetClass) throws Throwable {
		List<String> keys = this.evaluator.keys(operation, invocation.getArguments(), target, targetClass);
		LockTemplate template = this.template.get();
		Lease lease;
		if (operation.onFailure() == OnFailure.SKIP) {
			Optional<MultiLease> acquired = template.tryAcquireAll(keys, operation.options());
			if (acquired.isEmpty()) {
				if (logger.isDebugEnabled()) {
					logger.debug("Skipped " + operation.description() + ": locks " + keys + " are not all free");
				}
				return operation.returnsOptional() ? Optional.empty() : null;
			}
			lease = acquired.get();
		}
		else {
			lease = template.acquireAll(keys, operation.options());
		}
		return LeasedCall.call(lease, invocation::proceed);
	}

}
