package dev.distlock.aop;

import java.lang.reflect.Method;

import dev.distlock.LockOptions;
import dev.distlock.OnFailure;

import org.springframework.context.expression.AnnotatedElementKey;

/**
 * A {@link dev.distlock.DistributedLock} annotation resolved once for one method of one
 * target class: the key expression (already parsed), the options with the named set and
 * the annotation's durations applied, and what to return when skipping.
 *
 * @param method the most specific method, whose parameter names the key expression sees
 * @param elementKey the cache key of the parsed expression
 * @param keyExpression the SpEL key expression
 * @param options annotation and named-set options; unset values come from the global
 * configuration
 * @param onFailure what to do when the lock is not acquired
 * @param returnsOptional whether a skipped call returns {@code Optional.empty()} rather
 * than {@code null}
 * @param description the method, for messages
 */
record LockOperation(Method method, AnnotatedElementKey elementKey, String keyExpression, LockOptions options,
		OnFailure onFailure, boolean returnsOptional, String description) {
}
