package dev.distlock.aop;

import java.util.Optional;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.LockTemplate;
import dev.distlock.OnFailure;
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
 * through {@link LeasedCall}. Fails closed: when the lock is not acquired, or the key is
 * invalid, the method is not invoked.
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

}
