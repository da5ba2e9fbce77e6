package dev.distlock.aop;

import java.lang.reflect.Constructor;
import java.lang.reflect.Array;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import org.springframework.context.expression.AnnotatedElementKey;
import org.springframework.context.expression.BeanFactoryResolver;
import org.springframework.context.expression.CachedExpressionEvaluator;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.EvaluationException;
import org.springframework.expression.Expression;
import org.springframework.expression.ParseException;
import org.springframework.expression.TypeLocator;
import org.springframework.expression.spel.SpelNode;
import org.springframework.expression.spel.ast.VariableReference;
import org.springframework.expression.spel.standard.SpelExpression;

/**
 * Parses key expressions once (at startup) and evaluates them per call against the
 * method's arguments. Type references ({@code T(...)}, {@code new ...}) are refused
 * unless {@code distributed-lock.allow-type-references-in-keys} is set: a lock key needs
 * none, and an expression that can reach arbitrary classes is a risk wherever annotation
 * values come from outside the codebase.
 */
final class LockKeyEvaluator extends CachedExpressionEvaluator {

	private static final TypeLocator NO_TYPES = (typeName) -> {
		throw new EvaluationException("type references such as T(" + typeName + ") are not allowed in lock keys");
	};

	/** What {@link #parse} returns for a key that is not just one argument. */
	static final int NOT_AN_ARGUMENT = -1;

	private final Map<ExpressionKey, Expression> expressions = new ConcurrentHashMap<>(64);

	private final @Nullable BeanFactoryResolver beanResolver;

	/** Parameter names, discovered once per method rather than at every call. */
	private final ParameterNameDiscoverer parameterNames = new CachedParameterNames();

	private final boolean allowTypeReferences;

	LockKeyEvaluator(@Nullable BeanFactory beanFactory, boolean allowTypeReferences) {
		this.beanResolver = (beanFactory != null) ? new BeanFactoryResolver(beanFactory) : null;
		this.allowTypeReferences = allowTypeReferences;
	}

	/**
	 * Parses and caches. A syntax error, or a {@code #variable} that is not one of the
	 * method's parameters ({@code #name}, {@code #p0}, {@code #a0}) fails, naming the
	 * method: such a key would silently evaluate to null at every call.
	 */
	int parse(String expression, AnnotatedElementKey elementKey, String description, Method method) {
		Expression parsed;
		try {
			parsed = getExpression(this.expressions, elementKey, expression);
		}
		catch (ParseException ex) {
			throw new LockDeclarationException(description, LockDeclarationException.Reason.INVALID, null,
					"@DistributedLock key \"" + expression + "\" on " + description
							+ " is not a valid SpEL expression: " + ex.getMessage(),
					ex);
		}
		if (parsed instanceof SpelExpression spel) {
			@Nullable String[] names = getParameterNameDiscoverer().getParameterNames(method);
			checkVariables(spel.getAST(), expression, description, method, names);
			return argumentIndex(spel.getAST(), method, names);
		}
		return NOT_AN_ARGUMENT;
	}

	/**
	 * The index of the argument a key expression is, when it is nothing but one parameter
	 * ({@code #orderId}, {@code #p0}, {@code #a0}), the common case: such a key is read
	 * from the arguments without an evaluation context, which costs more than an
	 * in-memory lock. Otherwise (and for varargs methods, whose arguments SpEL reshapes)
	 * {@link #NOT_AN_ARGUMENT}.
	 */
	private static int argumentIndex(SpelNode ast, Method method, @Nullable String @Nullable [] names) {
		if (!(ast instanceof VariableReference) || method.isVarArgs()) {
			return NOT_AN_ARGUMENT;
		}
		String variable = ast.toStringAST().substring(1);
		int byName = (names != null) ? Arrays.asList(names).indexOf(variable) : -1;
		int byPosition = -1;
		if (variable.length() > 1 && (variable.charAt(0) == 'p' || variable.charAt(0) == 'a')) {
			try {
				byPosition = Integer.parseInt(variable.substring(1));
			}
			catch (NumberFormatException ex) {
				// A name such as #price, not a position.
			}
		}
		if (byName >= 0 && byPosition >= 0 && byName != byPosition) {
			// A parameter named like another's position: left to SpEL's own rules.
			return NOT_AN_ARGUMENT;
		}
		int index = (byName >= 0) ? byName : byPosition;
		return (index >= 0 && index < method.getParameterCount()) ? index : NOT_AN_ARGUMENT;
	}

	private static void checkVariables(SpelNode node, String expression, String description, Method method,
			@Nullable String @Nullable [] names) {
		if (node instanceof VariableReference) {
			String variable = node.toStringAST().substring(1);
			if (!isParameter(variable, method, names)) {
				String known = (names != null) ? String.join(", ", names) : "none: compile with -parameters";
				throw new LockDeclarationException(description, LockDeclarationException.Reason.INVALID, null,
						"@DistributedLock key \"" + expression + "\" on " + description + " uses #" + variable
								+ ", which is not a parameter of the method (parameter names: " + known
								+ "; by position: #p0 or #a0)",
						null);
			}
		}
		for (int i = 0; i < node.getChildCount(); i++) {
			checkVariables(node.getChild(i), expression, description, method, names);
		}
	}

	private static boolean isParameter(String variable, Method method, @Nullable String @Nullable [] names) {
		if (variable.equals("root") || variable.equals("this")) {
			return true;
		}
		if (names != null && Arrays.asList(names).contains(variable)) {
			return true;
		}
		if (variable.length() > 1 && (variable.charAt(0) == 'p' || variable.charAt(0) == 'a')) {
			try {
				int index = Integer.parseInt(variable.substring(1));
				return index >= 0 && index < method.getParameterCount();
			}
			catch (NumberFormatException ex) {
				return false;
			}
		}
		return false;
	}

	/**
	 * The lock key for one call.
	 * @throws IllegalArgumentException if the key evaluates to null or blank, or cannot
	 * be evaluated
	 */
	String key(LockOperation operation, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {
		Method method = operation.method();
		Object value;
		if (operation.keyArgument() != NOT_AN_ARGUMENT && operation.keyArgument() < args.length) {
			value = args[operation.keyArgument()];
		}
		else {
			try {
				value = getExpression(this.expressions, operation.elementKey(), operation.keyExpression())
					.getValue(context(method, args, target, targetClass));
			}
			catch (EvaluationException ex) {
				throw new IllegalArgumentException("@DistributedLock key \"" + operation.keyExpression() + "\" on "
						+ operation.description() + " could not be evaluated: " + ex.getMessage(), ex);
			}
		}
		if (value != null && !isKeyType(value)) {
			throw new IllegalArgumentException("@DistributedLock key \"" + operation.keyExpression() + "\" on "
					+ operation.description() + " evaluated to a " + value.getClass().getName()
					+ "; a key must be a string, number, boolean, character, enum or UUID (build one string, for"
					+ " example #order.id + ':' + #sku); the method was not invoked");
		}
		String key = (value != null) ? value.toString() : null;
		if (key == null || key.isBlank()) {
			throw new IllegalArgumentException("@DistributedLock key \"" + operation.keyExpression() + "\" on "
					+ operation.description() + " evaluated to " + ((key == null) ? "null" : "a blank string")
					+ "; the method was not invoked" + parameterNameHint(method));
		}
		return key;
	}

	/**
	 * The keys of a multi-key lock for one call: every expression's value, a collection
	 * or an array flattened, in order (the template deduplicates and sorts them).
	 * @throws IllegalArgumentException if an expression cannot be evaluated, or gives no
	 * key, or a key that is null, blank or not a key type
	 */
	List<String> keys(LockOperation operation, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {
		MethodBasedEvaluationContext context = context(operation.method(), args, target, targetClass);
		List<String> keys = new ArrayList<>();
		for (String expression : operation.keyExpressions()) {
			Object value;
			try {
				value = getExpression(this.expressions, operation.elementKey(), expression).getValue(context);
			}
			catch (EvaluationException ex) {
				throw new IllegalArgumentException("@DistributedLock keys entry \"" + expression + "\" on "
						+ operation.description() + " could not be evaluated: " + ex.getMessage(), ex);
			}
			Collection<?> values = (value instanceof Collection<?> collection) ? collection
					: (value != null && value.getClass().isArray()) ? arrayElements(value)
							: Collections.singletonList(value);
			if (values.isEmpty()) {
				throw new IllegalArgumentException("@DistributedLock keys entry \"" + expression + "\" on "
						+ operation.description() + " evaluated to an empty " + value.getClass().getSimpleName()
						+ "; the method was not invoked");
			}
			for (Object element : values) {
				String key = (element != null && isKeyType(element)) ? element.toString() : null;
				if (key == null || key.isBlank()) {
					throw new IllegalArgumentException("@DistributedLock keys entry \"" + expression + "\" on "
							+ operation.description() + " gave "
							+ ((element == null) ? "null"
									: isKeyType(element) ? "a blank key" : "a " + element.getClass().getName())
							+ " among " + values + "; every key must be a non-blank string, number, boolean,"
							+ " character, enum or UUID; the method was not invoked");
				}
				keys.add(key);
			}
		}
		return keys;
	}

	private static List<Object> arrayElements(Object array) {
		int length = Array.getLength(array);
		List<Object> elements = new ArrayList<>(length);
		for (int i = 0; i < length; i++) {
			elements.add(Array.get(array, i));
		}
		return elements;
	}

	private MethodBasedEvaluationContext context(Method method, @Nullable Object[] args, @Nullable Object target,
			Class<?> targetClass) {
		LockExpressionRootObject root = new LockExpressionRootObject(method, args, target, targetClass);
		MethodBasedEvaluationContext context = new MethodBasedEvaluationContext(root, method, args,
				this.parameterNames);
		if (!this.allowTypeReferences) {
			context.setTypeLocator(NO_TYPES);
		}
		if (this.beanResolver != null) {
			context.setBeanResolver(this.beanResolver);
		}
		return context;
	}

	private static boolean isKeyType(Object value) {
		return value instanceof CharSequence || value instanceof Number || value instanceof Boolean
				|| value instanceof Character || value instanceof Enum<?> || value instanceof UUID;
	}

	private String parameterNameHint(Method method) {
		if (method.getParameterCount() > 0 && getParameterNameDiscoverer().getParameterNames(method) == null) {
			return " (parameter names are not available: compile with -parameters, or use #p0/#a0)";
		}
		return "";
	}

	/** The evaluator's parameter name discoverer, with its answer kept per method. */
	private final class CachedParameterNames implements ParameterNameDiscoverer {

		private final Map<Method, Optional<@Nullable String[]>> names = new ConcurrentHashMap<>();

		@Override
		public @Nullable String @Nullable [] getParameterNames(Method method) {
			return this.names
				.computeIfAbsent(method, (m) -> Optional.ofNullable(getParameterNameDiscoverer().getParameterNames(m)))
				.orElse(null);
		}

		@Override
		public @Nullable String @Nullable [] getParameterNames(Constructor<?> constructor) {
			return getParameterNameDiscoverer().getParameterNames(constructor);
		}

	}

}
