package dev.distlock.aop;

import java.lang.reflect.Method;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.TypeLocator;

/**
 * Parses key expressions once (at startup) and evaluates them per call against the
 * method's arguments. Type references ({@code T(...)}, {@code new ...}) are refused: a
 * lock key needs none, and an expression that can reach arbitrary classes is a risk
 * wherever annotation values come from outside the codebase.
 */
final class LockKeyEvaluator extends CachedExpressionEvaluator {

	private static final TypeLocator NO_TYPES = (typeName) -> {
		throw new EvaluationException("type references such as T(" + typeName + ") are not allowed in lock keys");
	};

	private final Map<ExpressionKey, Expression> expressions = new ConcurrentHashMap<>(64);

	private final @Nullable BeanFactoryResolver beanResolver;

	LockKeyEvaluator(@Nullable BeanFactory beanFactory) {
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
	}

	/** Parses and caches; a syntax error names the method. */
	void parse(String expression, AnnotatedElementKey elementKey, String description) {
		try {
			getExpression(this.expressions, elementKey, expression);
		}
		catch (ParseException ex) {
			throw new IllegalStateException("@DistributedLock key \"" + expression + "\" on " + description
					+ " is not a valid SpEL expression: " + ex.getMessage(), ex);
		}
	}

	/**
	 * The lock key for one call.
	 * @throws IllegalArgumentException if the key evaluates to null or blank, or cannot
	 * be evaluated
	 */
	String key(LockOperation operation, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {
		Method method = operation.method();
		LockExpressionRootObject root = new LockExpressionRootObject(method, args, target, targetClass);
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args,
				getParameterNameDiscoverer());
		context.setTypeLocator(NO_TYPES);
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		Object value;
		try {
			value = getExpression(this.expressions, operation.elementKey(), operation.keyExpression())
				.getValue(context);
		}
		catch (EvaluationException ex) {
			throw new IllegalArgumentException("@DistributedLock key \"" + operation.keyExpression() + "\" on "
					+ operation.description() + " could not be evaluated: " + ex.getMessage(), ex);
		}
		String key = (value != null) ? value.toString() : null;
		if (key == null || key.isBlank()) {
			throw new IllegalArgumentException("@DistributedLock key \"" + operation.keyExpression() + "\" on "
					+ operation.description() + " evaluated to " + ((key == null) ? "null" : "a blank string")
					+ "; the method was not invoked" + parameterNameHint(method));
		}
		return key;
	}

	private String parameterNameHint(Method method) {
		if (method.getParameterCount() > 0 && getParameterNameDiscoverer().getParameterNames(method) == null) {
			return " (parameter names are not available: compile with -parameters, or use #p0/#a0)";
		}
		return "";
	}

}
