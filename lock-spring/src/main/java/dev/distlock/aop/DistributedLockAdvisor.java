package dev.distlock.aop;

import java.lang.reflect.Method;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import org.aopalliance.aop.Advice;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.ClassFilter;
import org.springframework.aop.Pointcut;
import org.springframework.aop.support.AbstractPointcutAdvisor;
import org.springframework.aop.support.StaticMethodMatcherPointcut;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * The infrastructure advisor that applies {@link DistributedLockInterceptor} to
 * {@link DistributedLock} methods. Its order places it outside {@code @Transactional}
 * (whose advisor defaults to the lowest precedence), so a lock is released only after the
 * transaction on the same method has completed.
 *
 * <p>
 * While beans are being proxied, the pointcut looks only for the annotation: it reads no
 * configuration and no store, since it also runs during ahead-of-time processing, when
 * configuration properties are not bound and no store can be created. Once every
 * singleton exists ({@link #afterSingletonsInstantiated()}) each annotated method seen so
 * far is resolved, named option sets and the store's capabilities included, so a bad
 * declaration fails startup with a {@link LockDeclarationException} naming the method; a
 * bean created later is checked when it is proxied. Used without a bean factory, the
 * advisor resolves each method at its first call.
 */
public final class DistributedLockAdvisor extends AbstractPointcutAdvisor implements SmartInitializingSingleton {

	private static final long serialVersionUID = 1L;

	private final transient LockOperationSource source;

	private final transient DistributedLockInterceptor interceptor;

	private final transient Pointcut pointcut = new StaticMethodMatcherPointcut() {

		@Override
		public ClassFilter getClassFilter() {
			return (clazz) -> AnnotationUtils.isCandidateClass(clazz, DistributedLock.class);
		}

		@Override
		public boolean matches(Method method, Class<?> targetClass) {
			return DistributedLockAdvisor.this.source.matches(method, targetClass);
		}

	};

	/**
	 * @param namedOptions the option set for a {@code name}, or null when none is
	 * configured; called only for annotations that name one
	 * @param template the template to lock with, looked up on first use
	 * @param beanFactory resolves {@code ${...}} placeholders and {@code @bean}
	 * references
	 * @param order the advisor's order
	 */
	public DistributedLockAdvisor(Function<String, @Nullable LockOptions> namedOptions, Supplier<LockTemplate> template,
			@Nullable ConfigurableBeanFactory beanFactory, int order) {
		this(namedOptions, template, beanFactory, order, false);
	}

	/**
	 * As
	 * {@link #DistributedLockAdvisor(Function, Supplier, ConfigurableBeanFactory, int)}.
	 * @param allowTypeReferences whether key expressions may use {@code T(...)} and
	 * {@code new} (off by default: a lock key needs neither)
	 */
	public DistributedLockAdvisor(Function<String, @Nullable LockOptions> namedOptions, Supplier<LockTemplate> template,
			@Nullable ConfigurableBeanFactory beanFactory, int order, boolean allowTypeReferences) {
		this(namedOptions, template, beanFactory, order, allowTypeReferences, (options) -> null);
	}

	/**
	 * As
	 * {@link #DistributedLockAdvisor(Function, Supplier, ConfigurableBeanFactory, int, boolean)}.
	 * @param unsupported what the configured store cannot do of a method's options (for
	 * example fair locks), or null if it can do all of it: a method whose options the
	 * store cannot honour fails at startup with that message
	 */
	public DistributedLockAdvisor(Function<String, @Nullable LockOptions> namedOptions, Supplier<LockTemplate> template,
			@Nullable ConfigurableBeanFactory beanFactory, int order, boolean allowTypeReferences,
			Function<LockOptions, @Nullable String> unsupported) {
		this(namedOptions, template, beanFactory, order, allowTypeReferences, unsupported, () -> null);
	}

	/**
	 * As
	 * {@link #DistributedLockAdvisor(Function, Supplier, ConfigurableBeanFactory, int, boolean, Function)}.
	 * @param noMultiKeyLocks why the configured store cannot take multi-key locks, or
	 * null if it can: a method with {@code keys} then fails at startup with that message
	 */
	public DistributedLockAdvisor(Function<String, @Nullable LockOptions> namedOptions, Supplier<LockTemplate> template,
			@Nullable ConfigurableBeanFactory beanFactory, int order, boolean allowTypeReferences,
			Function<LockOptions, @Nullable String> unsupported, Supplier<@Nullable String> noMultiKeyLocks) {
		LockKeyEvaluator evaluator = new LockKeyEvaluator(beanFactory, allowTypeReferences);
		this.source = new LockOperationSource(namedOptions,
				(beanFactory != null) ? beanFactory::resolveEmbeddedValue : null, evaluator, unsupported,
				noMultiKeyLocks);
		this.interceptor = new DistributedLockInterceptor(this.source, evaluator, template);
		setOrder(order);
	}

	/**
	 * Resolves every annotated method seen so far.
	 * @throws LockDeclarationException for a declaration that cannot be honoured
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.source.checkAll();
	}

	@Override
	public Pointcut getPointcut() {
		return this.pointcut;
	}

	@Override
	public Advice getAdvice() {
		return this.interceptor;
	}

}
