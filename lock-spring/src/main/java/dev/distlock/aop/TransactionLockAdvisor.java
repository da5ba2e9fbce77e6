package dev.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.distlock.LockOptions;
import dev.distlock.OnFailure;
import dev.distlock.TransactionLock;
import dev.distlock.TransactionLocks;
import org.aopalliance.aop.Advice;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.AopProxyUtils;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.MethodClassKey;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * The infrastructure advisor that applies {@link TransactionLock}: evaluates the key and
 * takes the lock through {@link TransactionLocks} in the transaction that is active when
 * the method is called, then runs the method; the lock is released by the transaction's
 * commit or rollback, so the advice has nothing to do afterwards.
 *
 * <p>
 * Its order is the lowest precedence, the same as {@code @Transactional}'s by default,
 * and it is registered after the transaction advisor, so on a method carrying both it
 * runs inside the transaction. Key expressions are parsed when beans are proxied, so one
 * that does not parse fails startup naming the method; the wait time is resolved at the
 * first call.
 */
public final class TransactionLockAdvisor extends AbstractPointcutAdvisor {

	private static final long serialVersionUID = 1L;

	private final transient LockKeyEvaluator evaluator;

	private final transient @Nullable ConfigurableBeanFactory beanFactory;

	private final transient Map<MethodClassKey, Optional<Operation>> operations = new ConcurrentHashMap<>(64);

	private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {

		@Override
		public ClassFilter getClassFilter() {
			return (clazz) -> AnnotationUtils.isCandidateClass(clazz, TransactionLock.class);
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return operation(method, targetClass) != null;
		}

	};

	private final transient MethodInterceptor interceptor;

	/**
	 * @param locks the transaction locks, looked up at the first call
	 * @param beanFactory resolves {@code ${...}} placeholders and {@code @bean}
	 * references
	 * @param allowTypeReferences whether key expressions may use {@code T(...)} and
	 * {@code new}
	 */
	public TransactionLockAdvisor(Supplier<TransactionLocks> locks, @Nullable ConfigurableBeanFactory beanFactory,
			boolean allowTypeReferences) {
		this.evaluator = new LockKeyEvaluator(beanFactory, allowTypeReferences);
		this.beanFactory = beanFactory;
		this.interceptor = (invocation) -> invoke(invocation, locks);
		setOrder(Ordered.LOWEST_PRECEDENCE);
	}

	private @Nullable Object invoke(MethodInvocation invocation, Supplier<TransactionLocks> locks) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopProxyUtils.ultimateTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		Operation operation = operation(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		String key = this.evaluator.key(operation.lock(), invocation.getArguments(), target, targetClass);
		Duration waitTime = operation.waitTime(this.beanFactory);
		if (waitTime != null) {
			locks.get().lock(key, waitTime);
		}
		else {
			locks.get().lock(key);
		}
		return invocation.proceed();
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

	private @Nullable Operation operation(Method method, @Nullable Class<?> targetClass) {
		if (method.getDeclaringClass() == Object.class) {
			return null;
		}
		return this.operations
			.computeIfAbsent(new MethodClassKey(method, targetClass), (key) -> resolve(method, targetClass))
			.orElse(null);
	}

	private Optional<Operation> resolve(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		TransactionLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, TransactionLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, TransactionLock.class);
		}
		if (annotation == null) {
			return Optional.empty();
		}
		Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
		String description = ClassUtils.getQualifiedMethodName(specific, owner) + "()";
		if (!StringUtils.hasText(annotation.key())) {
			throw new LockDeclarationException(description, LockDeclarationException.Reason.INVALID, null,
					"@TransactionLock on " + description + " has an empty key", null);
		}
		AnnotatedElementKey elementKey = new AnnotatedElementKey(specific, owner);
		int keyArgument = this.evaluator.parse(annotation.key(), elementKey, description, specific);
		LockOperation lock = new LockOperation(specific, elementKey, annotation.key(), LockOptions.defaults(),
				OnFailure.THROW, false, description, List.of(), keyArgument);
		return Optional.of(new Operation(lock, annotation.waitTime()));
	}

	/**
	 * A resolved {@link TransactionLock}: the parsed key and the wait time as written.
	 */
	private static final class Operation {

		private final LockOperation lock;

		private final String waitTimeText;

		private volatile @Nullable Optional<Duration> waitTime;

		Operation(LockOperation lock, String waitTimeText) {
			this.lock = lock;
			this.waitTimeText = waitTimeText;
		}

		LockOperation lock() {
			return this.lock;
		}

		/** The annotation's wait time, or null for the configured one. */
		@Nullable Duration waitTime(@Nullable ConfigurableBeanFactory beanFactory) {
			Optional<Duration> resolved = this.waitTime;
			if (resolved == null) {
				resolved = Optional.ofNullable(parse(beanFactory));
				this.waitTime = resolved;
			}
			return resolved.orElse(null);
		}

		private @Nullable Duration parse(@Nullable ConfigurableBeanFactory beanFactory) {
			if (!StringUtils.hasText(this.waitTimeText)) {
				return null;
			}
			String text = (beanFactory != null) ? beanFactory.resolveEmbeddedValue(this.waitTimeText)
					: this.waitTimeText;
			Duration duration;
			try {
				duration = DurationFormatterUtils.detectAndParse((text != null) ? text.trim() : "");
			}
			catch (IllegalArgumentException ex) {
				throw invalid("is not a duration (use e.g. 500ms, 2s or PT2S)", ex);
			}
			if (duration.isNegative()) {
				throw invalid("must not be negative", null);
			}
			return duration;
		}

		private LockDeclarationException invalid(String rule, @Nullable Throwable cause) {
			String description = this.lock.description();
			return new LockDeclarationException(description, LockDeclarationException.Reason.INVALID, null,
					"@TransactionLock(waitTime = \"" + this.waitTimeText + "\") on " + description + " " + rule, cause);
		}

	}

}
