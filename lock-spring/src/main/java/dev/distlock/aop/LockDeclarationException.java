package dev.distlock.aop;

import org.jspecify.annotations.Nullable;

/**
 * A {@link dev.distlock.DistributedLock} declaration that cannot be honoured, found when
 * the application starts (or, for a bean created later, when it is proxied): the message
 * names the method and what is wrong, and {@link #reason()} tells the kind of problem, so
 * that a startup failure report can say what to do.
 */
public class LockDeclarationException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String method;

	private final Reason reason;

	private final @Nullable String optionSet;

	/**
	 * @param method the annotated method, as {@code com.example.Orders.ship()}
	 * @param reason the kind of problem
	 * @param optionSet the option set the annotation names, if any
	 * @param message what is wrong, naming the method
	 * @param cause the underlying error, if any
	 */
	public LockDeclarationException(String method, Reason reason, @Nullable String optionSet, String message,
			@Nullable Throwable cause) {
		super(message, cause);
		this.method = method;
		this.reason = reason;
		this.optionSet = optionSet;
	}

	/** The annotated method, as {@code com.example.Orders.ship()}. */
	public String method() {
		return this.method;
	}

	/** The kind of problem. */
	public Reason reason() {
		return this.reason;
	}

	/** The option set the annotation names ({@code name}), or null. */
	public @Nullable String optionSet() {
		return this.optionSet;
	}

	/** The kinds of problem a declaration can have. */
	public enum Reason {

		/**
		 * The annotation itself is wrong: a key that does not parse, a bad duration,
		 * {@code SKIP} on a method returning a value, an asynchronous method.
		 */
		INVALID,

		/** {@code name} selects an option set that is not configured. */
		UNKNOWN_OPTION_SET,

		/**
		 * The store in use cannot take this kind of lock (read locks, semaphores,
		 * multi-key or fair locks).
		 */
		UNSUPPORTED_BY_STORE

	}

}
