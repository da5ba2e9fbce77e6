package dev.distlock;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * Runs the annotated method holding a lock on the evaluated {@link #key()} that belongs
 * to the method's database transaction ({@link TransactionLocks}): the lock is taken
 * inside the transaction, before the method body runs, and released when the transaction
 * commits or rolls back, never earlier. No lease can run out under the method.
 *
 * <p>
 * Use it together with {@code @Transactional} on the same method (its advice runs inside
 * the transaction's), or on a method called inside a transaction. Called with no
 * transaction active, the method is not invoked and {@link IllegalStateException} names
 * the key. When the lock is still held by another transaction at the end of the wait
 * time, the method is not invoked and {@link LockAcquisitionException} is thrown; the
 * transaction then rolls back as for any runtime exception.
 *
 * <p>
 * The key expression is the same as {@link DistributedLock#key()}'s. A transaction lock
 * and a {@link DistributedLock} of the same key are unrelated locks. To read the fencing
 * token inside the method, call {@link TransactionLocks#lock(String)} on the same key:
 * the transaction holds it already, so it returns the token at once.
 *
 * <pre>
 * &#64;Transactional
 * &#64;TransactionLock(key = "'account:' + #id")
 * public void debit(long id, long cents) { ... }
 * </pre>
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
@Reflective
public @interface TransactionLock {

	/**
	 * SpEL expression for the lock key, evaluated against each call, as for
	 * {@link DistributedLock#key()}. An expression that does not parse fails the
	 * application at startup; one that evaluates to {@code null} or a blank string throws
	 * {@link IllegalArgumentException} and the method is not invoked.
	 */
	String key();

	/**
	 * How long to wait for another transaction that holds the lock: a duration such as
	 * {@code 500ms}, {@code 2s}, {@code PT2S} or a {@code ${...}} placeholder; {@code 0}
	 * tries once. Empty takes {@code distributed-lock.wait-time}.
	 */
	String waitTime() default "";

}
