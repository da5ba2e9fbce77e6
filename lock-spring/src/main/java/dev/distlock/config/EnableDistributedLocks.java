package dev.distlock.config;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Import;
import org.springframework.core.Ordered;

/**
 * Turns on {@link dev.distlock.DistributedLock @DistributedLock} in a Spring application
 * without Spring Boot (with Boot, the starter's auto-configuration does this). Put it on
 * a {@code @Configuration} class and define one {@link dev.distlock.LockTemplate} bean,
 * for example a {@link dev.distlock.support.DefaultLockTemplate} over a store's
 * {@link dev.distlock.spi.LockProvider}.
 *
 * <p>
 * Registers the lock advisor, the {@link dev.distlock.TransactionLock @TransactionLock}
 * advisor (which takes its locks through the application's
 * {@link dev.distlock.TransactionLocks} bean, looked up at the first call) and, if the
 * application has none, an auto-proxy creator. A transaction lock is taken in the
 * transaction active when the method is called: on a method that also carries
 * {@code @Transactional} (at its default order), inside that transaction. Every annotated
 * method is checked once the context's singletons exist (a bean created later: when it is
 * created), so a key that does not parse, a {@code #variable} that is not a parameter, a
 * bad duration, a {@code name} (named option sets need the Boot auto-configuration) or a
 * kind of lock the store does not offer fails the context's refresh with a
 * {@link dev.distlock.aop.LockDeclarationException} naming the method. The
 * {@code LockTemplate} is looked up at the first locked call, so it may depend on
 * anything; if there is none, that call fails and the method is not invoked.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Import({ DistributedLockConfiguration.class, TransactionLockConfiguration.Selector.class })
public @interface EnableDistributedLocks {

	/**
	 * The order of the lock advisor among the advisors on the same method. The default
	 * places it outside {@code @Transactional} (whose advisor has the lowest precedence
	 * unless configured otherwise), so a lock is released only after the transaction has
	 * completed; it is the auto-configuration's default too.
	 */
	int order() default Ordered.LOWEST_PRECEDENCE - 100;

	/**
	 * Whether key expressions may use type references ({@code T(...)}) and constructors
	 * ({@code new}). Off by default: a lock key needs neither, and an expression that can
	 * reach arbitrary classes is a risk.
	 */
	boolean allowTypeReferencesInKeys() default false;

}
