package dev.distlock.aop;

import java.lang.reflect.Method;

import org.jspecify.annotations.Nullable;

/**
 * The {@code #root} object of a key expression: {@code #root.method},
 * {@code #root.methodName}, {@code #root.args}, {@code #root.target},
 * {@code #root.targetClass}.
 */
public final class LockExpressionRootObject {

	private final Method method;

	private final @Nullable Object[] args;

	private final @Nullable Object target;

	private final Class<?> targetClass;

	LockExpressionRootObject(Method method, @Nullable Object[] args, @Nullable Object target, Class<?> targetClass) {
		this.method = method;
		this.args = args;
		this.target = target;
		this.targetClass = targetClass;
	}

	public Method getMethod() {
		return this.method;
	}

	public String getMethodName() {
		return this.method.getName();
	}

	public @Nullable Object[] getArgs() {
		return this.args;
	}

	public @Nullable Object getTarget() {
		return this.target;
	}

	public Class<?> getTargetClass() {
		return this.targetClass;
	}

}
