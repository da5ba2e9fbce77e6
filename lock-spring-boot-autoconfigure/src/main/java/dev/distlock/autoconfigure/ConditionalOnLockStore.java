package dev.distlock.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when {@code distributed-lock.store} names this store, or is not set and the
 * store is one that may be chosen by default ({@link #byDefault()}).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ ElementType.TYPE, ElementType.METHOD })
@Documented
@Conditional(OnLockStoreCondition.class)
public @interface ConditionalOnLockStore {

	/** The store's name, as {@code distributed-lock.store} takes it. */
	String value();

	/**
	 * Whether the store is used when {@code distributed-lock.store} is not set; false for
	 * a store that must be asked for by name (the in-memory store).
	 */
	boolean byDefault() default true;

}
