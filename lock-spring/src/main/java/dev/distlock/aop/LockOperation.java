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
 * @param result how the method delivers its result, and so when its work is done
 */
record LockOperation(Method method, AnnotatedElementKey elementKey, String keyExpression, LockOptions options,
		OnFailure onFailure, boolean returnsOptional, String description, List<String> keyExpressions, int keyArgument,
		Result result) {

	/** An operation on a method that returns its result when its work is done. */
	LockOperation(Method method, AnnotatedElementKey elementKey, String keyExpression, LockOptions options,
			OnFailure onFailure, boolean returnsOptional, String description, List<String> keyExpressions,
			int keyArgument) {
		this(method, elementKey, keyExpression, options, onFailure, returnsOptional, description, keyExpressions,
				keyArgument, Result.RETURNED);
	}

	/** How a locked method delivers its result, and so when its work is done. */
	enum Result {

		/** When it returns or throws. */
		RETURNED,

		/** When the {@code CompletionStage} it returns completes. */
		COMPLETION_STAGE,

		/**
		 * When the reactive type it returns (any that Spring's
		 * {@code ReactiveAdapterRegistry} adapts) completes, fails or is cancelled.
		 */
		PUBLISHER,

		/**
		 * A Kotlin suspend function, which Spring AOP hands to interceptors as a
		 * {@code Publisher} of its result.
		 */
		SUSPEND

	}

	/** Whether the method takes a multi-key lock. */
	boolean multiKey() {
		return !this.keyExpressions.isEmpty();
	}

}
