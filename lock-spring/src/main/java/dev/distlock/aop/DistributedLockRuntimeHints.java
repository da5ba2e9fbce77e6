package dev.distlock.aop;

import dev.distlock.DistributedLock;
import dev.distlock.LockContext;
import dev.distlock.OnFailure;
import dev.distlock.TransactionLock;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What a native image must keep for {@code @DistributedLock} (and
 * {@code @TransactionLock}): the key expression's root object, whose getters SpEL calls
 * by reflection ({@code #root.method}, {@code #root.args}...), and the annotation's
 * attributes, which are read reflectively at startup. The annotated methods themselves
 * (SpEL reads their parameter names) are registered by Spring's {@code @Reflective}
 * processing, since {@link DistributedLock} is meta-annotated with it.
 */
public final class DistributedLockRuntimeHints implements RuntimeHintsRegistrar {

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.reflection()
			.registerType(LockExpressionRootObject.class, MemberCategory.INVOKE_PUBLIC_METHODS)
			.registerType(DistributedLock.class, MemberCategory.INVOKE_DECLARED_METHODS)
			.registerType(TransactionLock.class, MemberCategory.INVOKE_DECLARED_METHODS)
			.registerType(OnFailure.class, MemberCategory.INVOKE_PUBLIC_METHODS)
			.registerType(LockContext.class, MemberCategory.INVOKE_PUBLIC_METHODS);
	}

}
