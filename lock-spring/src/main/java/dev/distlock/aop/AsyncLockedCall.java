package dev.distlock.aop;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.OnFailure;
import dev.distlock.support.ContextLocking;
import dev.distlock.support.DefaultLockTemplate;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ProxyMethodInvocation;

/**
 * A call of a {@link dev.distlock.DistributedLock} method that returns a
 * {@code CompletionStage}: the lock is taken without blocking the caller (no store call
 * on its thread), the method is invoked only once it is held, inside a
 * {@link LockContext} scope of the lease, and the lease is released once the stage the
 * method returned completes, or once the caller cancels the returned future; the caller's
 * future completes after the release. Re-entry follows the caller's scope at the time of
 * the call.
 */
final class AsyncLockedCall {

	private final ContextLocking locking;

	AsyncLockedCall(DefaultLockTemplate template) {
		this.locking = new ContextLocking(template);
	}

	CompletableFuture<@Nullable Object> call(MethodInvocation invocation, LockOperation operation, List<String> keys) {
		List<Lease> scope = LockContext.held();
		CompletableFuture<? extends Optional<? extends Lease>> acquired = operation.multiKey()
				? this.locking.acquireAll(scope, keys, operation.options())
				: this.locking.acquire(scope, keys.get(0), operation.options());
		Supplier<RuntimeException> notAcquired = (operation.onFailure() == OnFailure.SKIP) ? null
				: () -> operation.multiKey() ? this.locking.notAllAcquired(keys, operation.options())
						: this.locking.notAcquired(keys.get(0), operation.options());
		Object skipped = operation.returnsOptional() ? Optional.empty() : null;
		MethodInvocation call = invocable(invocation);
		return this.locking.execute(acquired, notAcquired, skipped, () -> stage(call, operation));
	}

	@SuppressWarnings("unchecked")
	private static CompletionStage<@Nullable Object> stage(MethodInvocation call, LockOperation operation) {
		Object result;
		try {
			result = call.proceed();
		}
		catch (RuntimeException | Error ex) {
			throw ex;
		}
		catch (Throwable ex) {
			// Unwrapped again before it reaches the caller, unchanged.
			throw new CompletionException(ex);
		}
		if (result == null) {
			throw new NullPointerException(operation.description() + " returned null instead of a CompletionStage");
		}
		return (CompletionStage<@Nullable Object>) result;
	}

	/**
	 * An invocation that may proceed on another thread, later, once: the interceptors
	 * after this one and the method.
	 */
	static MethodInvocation invocable(MethodInvocation invocation) {
		return (invocation instanceof ProxyMethodInvocation proxied) ? proxied.invocableClone() : invocation;
	}

}
