package dev.distlock.aop;

import java.lang.reflect.Method;
import java.util.List;

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
 * @param keyExpression the SpEL key expression; empty for a multi-key lock
 * @param options annotation and named-set options; unset values come from the global
 * configuration
 * @param onFailure what to do when the lock is not acquired
 * @param returnsOptional whether a skipped call returns {@code Optional.empty()} rather
 * than {@code null}
 * @param description the method, for messages
 * @param keyExpressions the SpEL expressions of a multi-key lock ({@code keys}), each
 * giving one key, a collection or an array; empty for a single key
 * @param keyArgument the index of the argument that is the key, when the key expression
 * is just one parameter ({@code #orderId}); otherwise
 * {@link LockKeyEvaluator#NOT_AN_ARGUMENT}
 */
record LockOperation(Method method, AnnotatedElementKey elementKey, String keyExpression, LockOptions options,
		OnFailure onFailure, boolean returnsOptional, String description, List<String> keyExpressions,
		int keyArgument) {

	/** Whether the method takes a multi-key lock. */
	boolean multiKey() {
		return !this.keyExpressions.isEmpty();
	}

}
