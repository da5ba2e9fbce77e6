package dev.distlock;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.aot.hint.annotation.Reflective;

/**
 * Runs the annotated method while holding a distributed lock on the evaluated
 * {@link #key()}.
 *
 * <p>
 * The lock is acquired before the method runs and released after it returns or throws;
 * the method's own exception reaches the caller unchanged. The lock is reentrant per
 * thread: a nested call on the same key does not wait, and the lock is free only after
 * the outermost call ends. While the method runs, the lock is renewed in the background
 * (unless {@code auto-renew} is off), and {@link LockContext#current()} returns its
 * {@link Lease}, for example to pass the {@linkplain Lease#fencingToken() fencing token}
 * to a store.
 *
 * <p>
 * If the lease is lost while the method runs (a pause longer than the lease, Redis
 * failover), the loss is not silent: a {@link LeaseLostException} is thrown after the
 * method returns, or added as suppressed to the method's own exception.
 *
 * <p>
 * The advice is ordered outside {@code @Transactional} on the same method, so the lock is
 * released only after the transaction has completed. May be used as a meta-annotation.
 * Annotated methods are kept for reflection in a native image ({@link Reflective}), since
 * the key expression reads their parameter names.
 *
 * <pre>
 * &#64;DistributedLock(key = "'order:' + #order.id", waitTime = "2s", leaseTime = "10s")
 * public void ship(Order order) { ... }
 * </pre>
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
@Reflective
public @interface DistributedLock {

	/**
	 * SpEL expression for the lock key, evaluated against each call: parameter names
	 * ({@code #orderId}), {@code #p0}/{@code #a0}, {@code #root.method},
	 * {@code #root.args}, {@code #root.target}, bean references ({@code @bean}). A
	 * literal key is a quoted string ({@code "'nightly-report'"}). An expression that
	 * does not parse fails the application at startup; one that evaluates to {@code null}
	 * or a blank string throws {@link IllegalArgumentException} and the method is not
	 * invoked.
	 */
	String key();

	/**
	 * Selects the named option set {@code distributed-lock.locks.<name>}; empty uses the
	 * global defaults. A name with no such entry fails startup.
	 */
	String name() default "";

	/**
	 * How long to wait for the lock: a duration such as {@code 500ms}, {@code 2s},
	 * {@code PT2S} or a {@code ${...}} placeholder; {@code 0} tries once. Empty takes the
	 * configured value.
	 */
	String waitTime() default "";

	/**
	 * How long the lock outlives a crashed holder (and, with auto-renew off, how long it
	 * is held at most); same syntax as {@link #waitTime()}. Empty takes the configured
	 * value.
	 */
	String leaseTime() default "";

	/**
	 * The least time the lock stays taken, counted from the acquire, however soon the
	 * method returns; same syntax as {@link #waitTime()}. Empty or {@code 0}: none. A
	 * method that returns sooner does not keep a thread: the lock's lease in the store is
	 * shortened to what is left of this time instead of the lock being deleted. Meant for
	 * {@code @Scheduled} methods with {@code onFailure = SKIP}: a node whose clock is a
	 * little behind finds the lock still taken and skips the run another node has just
	 * done.
	 *
	 * <pre>
	 * &#64;Scheduled(cron = "0 0 * * * *")
	 * &#64;DistributedLock(key = "'hourly-report'", onFailure = OnFailure.SKIP, minHoldTime = "5m")
	 * public void hourlyReport() { ... }
	 * </pre>
	 */
	String minHoldTime() default "";

	/** What happens when the lock is not acquired within the wait time. */
	OnFailure onFailure() default OnFailure.THROW;

	/**
	 * Serve waiters in the order they queued, across JVMs. {@code false} leaves it to the
	 * named option set or {@code distributed-lock.fair}.
	 */
	boolean fair() default false;

	/**
	 * Which side of the key's read-write lock to take: {@link LockMode#WRITE} (the
	 * default) is the plain lock, exclusive; {@link LockMode#READ} shares the key with
	 * other readers and waits while a writer holds or waits for it. A store without read
	 * locks fails startup. Re-entry rules are on {@link LockMode}.
	 *
	 * <pre>
	 * &#64;DistributedLock(key = "'catalog'", mode = LockMode.READ)
	 * public Catalog read() { ... }
	 * </pre>
	 */
	LockMode mode() default LockMode.WRITE;

	/**
	 * Makes the key a semaphore admitting this many holders at once, and takes one permit
	 * of it; {@code 0} (the default) is a lock. Each permit is a lease of its own,
	 * renewed while the method runs, with its own fencing token, freed when the method
	 * ends and otherwise only when its holder dies. A semaphore and a lock of the same
	 * key are unrelated. Every caller of one semaphore must declare the same count. A
	 * negative count, a count with {@code mode = READ} or {@code fair = true}, or a store
	 * without semaphores fails startup.
	 *
	 * <pre>
	 * &#64;DistributedLock(key = "'exports'", permits = 5)
	 * public void export() { ... }
	 * </pre>
	 */
	int permits() default 0;

}
