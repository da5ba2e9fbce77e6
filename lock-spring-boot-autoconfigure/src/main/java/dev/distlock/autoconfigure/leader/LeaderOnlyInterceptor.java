package dev.distlock.autoconfigure.leader;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.LeaderOnly;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Runs a {@link LeaderOnly} method only while this instance leads its election; skips it
 * (returning {@code null}, or an empty {@code Optional}) otherwise. The election is
 * looked up once per method.
 */
final class LeaderOnlyInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(LeaderOnlyInterceptor.class);

	private final LeaderElections elections;

	private final Map<Method, LeaderElection> byMethod = new ConcurrentHashMap<>();

	LeaderOnlyInterceptor(LeaderElections elections) {
		this.elections = elections;
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Class<?> target = (invocation.getThis() != null) ? AopUtils.getTargetClass(invocation.getThis()) : null;
		Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), target);
		LeaderElection election = this.byMethod.computeIfAbsent(method, this::election);
		if (election.isLeader()) {
			return invocation.proceed();
		}
		if (logger.isTraceEnabled()) {
			logger.trace("Skipped " + method + ": this instance does not lead '" + election.name() + "'");
		}
		return (method.getReturnType() == Optional.class) ? Optional.empty() : null;
	}

	private LeaderElection election(Method method) {
		LeaderOnly annotation = AnnotatedElementUtils.findMergedAnnotation(method, LeaderOnly.class);
		if (annotation == null) {
			throw new IllegalStateException("No @LeaderOnly on " + method);
		}
		if (method.getReturnType().isPrimitive() && method.getReturnType() != void.class) {
			throw new IllegalStateException("@LeaderOnly method " + method + " returns a primitive: a skipped call"
					+ " has no value to return");
		}
		LeaderElection election = this.elections.get(annotation.value());
		if (election == null) {
			throw new IllegalStateException("@LeaderOnly(\"" + annotation.value() + "\") on " + method
					+ ": no such election; configure distributed-lock.leader.elections." + annotation.value());
		}
		return election;
	}

}
