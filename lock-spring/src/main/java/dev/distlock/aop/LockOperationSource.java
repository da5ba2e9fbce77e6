package dev.distlock.aop;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.distlock.DistributedLock;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.OnFailure;
import org.jspecify.annotations.Nullable;

import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.core.MethodClassKey;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.format.datetime.standard.DurationFormatterUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;
import org.springframework.util.StringValueResolver;

/**
 * Finds {@link DistributedLock} on a method (merged, so meta-annotations work; interface
 * and superclass methods too) and resolves it once per method and target class into a
 * {@link LockOperation}. Every check that can be made without a call is made before the
 * first call, so a bad annotation fails the application at startup naming the method
 * ({@link LockDeclarationException}): an expression that does not parse, a duration that
 * does not parse or is out of range, a {@code name} with no configured option set,
 * {@code SKIP} on a method that cannot return "nothing", and asynchronous results that
 * cannot be held until their work completes ({@link AsyncReturnTypes}): a plain
 * {@code Future}, a coroutine {@code Job}, a reactive or coroutine type without the
 * library that adapts it.
 */
public final class LockOperationSource {

	private static final Optional<LockOperation> NONE = Optional.empty();

	private final Function<String, @Nullable LockOptions> namedOptions;

	private final @Nullable StringValueResolver placeholders;

	private final LockKeyEvaluator evaluator;

	private final Map<MethodClassKey, Optional<LockOperation>> operations = new ConcurrentHashMap<>(256);

	private final Function<LockOptions, @Nullable String> unsupported;

	private final Supplier<@Nullable String> noMultiKeyLocks;

	/**
	 * Classes with annotated methods seen before {@link #checkAll()}, not resolved yet.
	 */
	private final Set<Class<?>> unchecked = ConcurrentHashMap.newKeySet();

	/** Classes whose annotated methods are all resolved. */
	private final Set<Class<?>> checked = ConcurrentHashMap.newKeySet();

	/**
	 * Whether the configuration and the store may be read: set by {@link #checkAll()}.
	 */
	private volatile boolean configured;

	LockOperationSource(Function<String, @Nullable LockOptions> namedOptions,
			@Nullable StringValueResolver placeholders, LockKeyEvaluator evaluator) {
		this(namedOptions, placeholders, evaluator, (options) -> null, () -> null);
	}

	/**
	 * @param unsupported what the configured store cannot do of an option set, or null if
	 * it can do all of it
	 * @param noMultiKeyLocks why the configured store cannot take multi-key locks
	 * ({@code keys}), or null if it can
	 */
	LockOperationSource(Function<String, @Nullable LockOptions> namedOptions,
			@Nullable StringValueResolver placeholders, LockKeyEvaluator evaluator,
			Function<LockOptions, @Nullable String> unsupported, Supplier<@Nullable String> noMultiKeyLocks) {
		this.unsupported = unsupported;
		this.noMultiKeyLocks = noMultiKeyLocks;
		this.namedOptions = namedOptions;
		this.placeholders = placeholders;
		this.evaluator = evaluator;
	}

	/**
	 * Whether {@code method} called on {@code targetClass} is annotated, for the
	 * pointcut. Until {@link #checkAll()}, nothing else is read: the pointcut is asked
	 * while beans are being proxied, possibly during ahead-of-time processing, when
	 * configuration properties are not bound and no store may be created; the class is
	 * remembered for {@link #checkAll()}. After it, the first time a class is seen every
	 * annotated method of it is resolved at once, so a bad declaration fails the creation
	 * of its bean, whichever of its methods the proxy asks about first.
	 */
	boolean matches(Method method, Class<?> targetClass) {
		if (!this.configured) {
			boolean annotated = method.getDeclaringClass() != Object.class && annotation(method, targetClass) != null;
			if (annotated) {
				this.unchecked.add(targetClass);
			}
			return annotated;
		}
		if (this.checked.add(targetClass)) {
			try {
				resolveAll(targetClass);
			}
			catch (RuntimeException ex) {
				this.checked.remove(targetClass);
				throw ex;
			}
		}
		return getOperation(method, targetClass) != null;
	}

	/**
	 * Resolves every annotated method of the classes seen so far, and from now on of each
	 * class when it is first seen: called once the application's beans exist, when the
	 * named option sets and the store can be read.
	 * @throws LockDeclarationException for the first declaration that cannot be honoured
	 */
	void checkAll() {
		this.configured = true;
		for (Class<?> targetClass : this.unchecked) {
			resolveAll(targetClass);
			this.checked.add(targetClass);
			this.unchecked.remove(targetClass);
		}
	}

	private void resolveAll(Class<?> targetClass) {
		Map<Method, DistributedLock> annotated = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<DistributedLock>) (candidate) -> AnnotatedElementUtils
					.findMergedAnnotation(candidate, DistributedLock.class));
		annotated.keySet().forEach((method) -> getOperation(method, targetClass));
	}

	private static @Nullable DistributedLock annotation(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = AnnotatedElementUtils.findMergedAnnotation(specific, DistributedLock.class);
		if (annotation == null && specific != method) {
			annotation = AnnotatedElementUtils.findMergedAnnotation(method, DistributedLock.class);
		}
		return annotation;
	}

	/**
	 * The operation for {@code method} called on {@code targetClass}, or {@code null} if
	 * not annotated.
	 */
	@Nullable LockOperation getOperation(Method method, @Nullable Class<?> targetClass) {
		if (method.getDeclaringClass() == Object.class) {
			return null;
		}
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		Optional<LockOperation> cached = this.operations.get(cacheKey);
		if (cached == null) {
			cached = Optional.ofNullable(resolve(method, targetClass));
			this.operations.put(cacheKey, cached);
		}
		return cached.orElse(null);
	}

	private @Nullable LockOperation resolve(Method method, @Nullable Class<?> targetClass) {
		Method specific = AopUtils.getMostSpecificMethod(method, targetClass);
		DistributedLock annotation = annotation(method, targetClass);
		if (annotation == null) {
			return null;
		}
		Class<?> owner = (targetClass != null) ? targetClass : specific.getDeclaringClass();
		String description = ClassUtils.getQualifiedMethodName(specific, owner) + "()";
		List<String> keys = List.of(annotation.keys());
		if (StringUtils.hasText(annotation.key()) == !keys.isEmpty()) {
			throw invalid(description,
					"@DistributedLock on " + description
							+ (keys.isEmpty() ? " has an empty key"
									: " sets both key and keys: set key for one lock, or keys for a multi-key lock"),
					null);
		}
		if (keys.stream().anyMatch((key) -> !StringUtils.hasText(key))) {
			throw invalid(description, "@DistributedLock on " + description + " has an empty entry in keys " + keys,
					null);
		}
		// First: no key or option can make some asynchronous methods safe to lock.
		LockOperation.Result result = AsyncReturnTypes.of(specific, description);
		AnnotatedElementKey elementKey = new AnnotatedElementKey(specific, owner);
		int keyArgument = LockKeyEvaluator.NOT_AN_ARGUMENT;
		if (keys.isEmpty()) {
			keyArgument = this.evaluator.parse(annotation.key(), elementKey, description, specific);
		}
		keys.forEach((key) -> this.evaluator.parse(key, elementKey, description, specific));
		LockOptions options = options(annotation, description);
		if (!keys.isEmpty() && Boolean.TRUE.equals(options.fair())) {
			throw invalid(description, "@DistributedLock on " + description
					+ ": a multi-key lock cannot be fair (a fair lock queues for one key)", null);
		}
		String missing = this.unsupported.apply(options);
		if (missing == null && !keys.isEmpty()) {
			missing = this.noMultiKeyLocks.get();
		}
		if (missing != null) {
			throw new LockDeclarationException(description, LockDeclarationException.Reason.UNSUPPORTED_BY_STORE,
					options.name(), "@DistributedLock on " + description + ": " + missing, null);
		}
		Class<?> returnType = specific.getReturnType();
		if (result == LockOperation.Result.RETURNED) {
			checkSkip(annotation.onFailure(), returnType, description);
		}
		return new LockOperation(specific, elementKey, annotation.key(), options, annotation.onFailure(),
				AsyncReturnTypes.yieldsOptional(specific, result), description, keys, keyArgument, result);
	}

	private LockOptions options(DistributedLock annotation, String description) {
		LockOptions base = StringUtils.hasText(annotation.name()) ? namedOptions(annotation, description)
				: LockOptions.defaults();
		LockOptions.Builder builder = LockOptions.builder();
		Duration waitTime = duration(annotation.waitTime(), "waitTime", description);
		if (waitTime != null) {
			check(waitTime.isNegative(), "waitTime", annotation.waitTime(), "must not be negative", description);
			builder.waitTime(waitTime);
		}
		Duration leaseTime = duration(annotation.leaseTime(), "leaseTime", description);
		if (leaseTime != null) {
			check(leaseTime.isNegative() || leaseTime.isZero(), "leaseTime", annotation.leaseTime(), "must be positive",
					description);
			builder.leaseTime(leaseTime);
		}
		if (annotation.fair()) {
			builder.fair(true);
		}
		Duration minHoldTime = duration(annotation.minHoldTime(), "minHoldTime", description);
		if (minHoldTime != null) {
			check(minHoldTime.isNegative(), "minHoldTime", annotation.minHoldTime(), "must not be negative",
					description);
			builder.minHoldTime(minHoldTime);
		}
		if (StringUtils.hasText(annotation.name())) {
			builder.name(annotation.name());
		}
		check(annotation.permits() < 0, "permits", String.valueOf(annotation.permits()),
				"must be zero (a lock) or positive (a semaphore)", description);
		check(annotation.permits() > 0 && annotation.mode() == LockMode.READ, "permits",
				String.valueOf(annotation.permits()),
				"cannot be combined with mode = READ (a semaphore has no read side)", description);
		if (annotation.mode() == LockMode.READ) {
			builder.mode(LockMode.READ);
		}
		if (annotation.permits() > 0) {
			builder.permits(annotation.permits());
		}
		return builder.build().orElse(base);
	}

	/**
	 * The options set the annotation names, configured under
	 * {@code distributed-lock.locks}.
	 */
	private LockOptions namedOptions(DistributedLock annotation, String description) {
		LockOptions named;
		try {
			named = this.namedOptions.apply(annotation.name());
		}
		catch (RuntimeException ex) {
			throw new LockDeclarationException(description, LockDeclarationException.Reason.UNKNOWN_OPTION_SET,
					annotation.name(), "@DistributedLock on " + description + ": " + ex.getMessage(), ex);
		}
		if (named == null) {
			throw new LockDeclarationException(description, LockDeclarationException.Reason.UNKNOWN_OPTION_SET,
					annotation.name(),
					"@DistributedLock on " + description + " names lock options '" + annotation.name()
							+ "', but distributed-lock.locks." + annotation.name() + " is not configured",
					null);
		}
		return named;
	}

	private @Nullable Duration duration(String value, String attribute, String description) {
		if (!StringUtils.hasText(value)) {
			return null;
		}
		String resolved = (this.placeholders != null) ? this.placeholders.resolveStringValue(value) : value;
		try {
			return DurationFormatterUtils.detectAndParse((resolved != null) ? resolved.trim() : "");
		}
		catch (IllegalArgumentException ex) {
			throw invalid(description, "@DistributedLock(" + attribute + " = \"" + value + "\") on " + description
					+ " is not a duration (use e.g. 500ms, 2s or PT2S)", ex);
		}
	}

	private static void check(boolean invalid, String attribute, String value, String rule, String description) {
		if (invalid) {
			throw invalid(description,
					"@DistributedLock(" + attribute + " = \"" + value + "\") on " + description + " " + rule, null);
		}
	}

	private static void checkSkip(OnFailure onFailure, Class<?> returnType, String description) {
		if (onFailure == OnFailure.SKIP && returnType != void.class && returnType != Void.class
				&& returnType != Optional.class) {
			throw invalid(description,
					"@DistributedLock(onFailure = SKIP) on " + description + " returns " + returnType.getName()
							+ ", but a skipped call can only return nothing: declare the method"
							+ " void or Optional, or use onFailure = THROW",
					null);
		}
	}

	static LockDeclarationException invalid(String description, String message, @Nullable Throwable cause) {
		return new LockDeclarationException(description, LockDeclarationException.Reason.INVALID, null, message, cause);
	}

}
