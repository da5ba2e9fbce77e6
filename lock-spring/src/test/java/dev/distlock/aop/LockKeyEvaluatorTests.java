package dev.distlock.aop;

import java.lang.reflect.Method;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.LockOptions;
import dev.distlock.OnFailure;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.context.expression.AnnotatedElementKey;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * A key that is just one parameter is read from the arguments without SpEL; it must give
 * what SpEL gives, the same key or the same error, for every way of naming the parameter,
 * and fall back to SpEL wherever SpEL's own rules decide.
 */
class LockKeyEvaluatorTests {

	private final LockKeyEvaluator evaluator = new LockKeyEvaluator(null, false);

	@Test
	void aParameterByNameOrPositionIsReadDirectly() throws Exception {
		Method method = Keys.class.getMethod("order", String.class, long.class, UUID.class, TimeUnit.class);
		assertThat(index("#sku", method)).isZero();
		assertThat(index("#quantity", method)).isEqualTo(1);
		assertThat(index("#p2", method)).isEqualTo(2);
		assertThat(index("#a3", method)).isEqualTo(3);
	}

	@Test
	void anythingMoreThanOneParameterIsLeftToSpel() throws Exception {
		Method order = Keys.class.getMethod("order", String.class, long.class, UUID.class, TimeUnit.class);
		assertThat(index("'order:' + #sku", order)).isEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
		assertThat(index("#sku.trim()", order)).isEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
		assertThat(index("#root.methodName", order)).isEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
		assertThat(index("'constant'", order)).isEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
		Method confusing = Keys.class.getMethod("confusing", String.class, String.class);
		assertThat(index("#p1", confusing)).as("a parameter named like another's position")
			.isEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
		Method varargs = Keys.class.getMethod("varargs", String[].class);
		assertThat(index("#p0", varargs)).isEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
	}

	@Test
	void theDirectReadGivesWhatSpelGives() throws Exception {
		Method method = Keys.class.getMethod("order", String.class, long.class, UUID.class, TimeUnit.class);
		UUID id = UUID.randomUUID();
		for (String expression : List.of("#sku", "#quantity", "#p2", "#a3")) {
			for (@Nullable
			Object[] args : List.<@Nullable Object[]>of(new Object[] { "sku-1", 7L, id, TimeUnit.SECONDS },
					new Object[] { null, 0L, null, null }, new Object[] { " ", -1L, id, TimeUnit.DAYS })) {
				assertThat(outcome(expression, method, args, true)).as(expression + " with " + Arrays.toString(args))
					.isEqualTo(outcome(expression, method, args, false));
			}
		}
		Method list = Keys.class.getMethod("list", List.class);
		@Nullable Object[] args = { List.of("a", "b") };
		assertThat(outcome("#skus", list, args, true)).contains("evaluated to a java.util")
			.isEqualTo(outcome("#skus", list, args, false));
	}

	private int index(String expression, Method method) {
		return this.evaluator.parse(expression, new AnnotatedElementKey(method, Keys.class), "test", method);
	}

	/** The key, or the error's message, with the direct read or with SpEL. */
	private String outcome(String expression, Method method, @Nullable Object[] args, boolean direct) {
		int index = index(expression, method);
		assertThat(index).isNotEqualTo(LockKeyEvaluator.NOT_AN_ARGUMENT);
		LockOperation operation = new LockOperation(method, new AnnotatedElementKey(method, Keys.class), expression,
				LockOptions.defaults(), OnFailure.THROW, false, "Keys.test()", List.of(),
				direct ? index : LockKeyEvaluator.NOT_AN_ARGUMENT);
		Throwable failure = catchThrowable(() -> this.evaluator.key(operation, args, new Keys(), Keys.class));
		if (failure != null) {
			assertThat(failure).isInstanceOf(IllegalArgumentException.class);
			return "error: " + failure.getMessage();
		}
		return this.evaluator.key(operation, args, new Keys(), Keys.class);
	}

	public static class Keys {

		public void order(String sku, long quantity, UUID id, TimeUnit unit) {
		}

		public void confusing(String p1, String other) {
		}

		public void varargs(String... keys) {
		}

		public void list(List<String> skus) {
		}

	}

}
