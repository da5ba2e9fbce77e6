package dev.distlock;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while this instance leads the named leader election
 * (configured under {@code distributed-lock.leader.elections.<name>}); otherwise the
 * method is skipped and returns {@code null} (an empty {@code Optional} for a method that
 * returns one; a method returning a primitive is refused). For {@code void} methods,
 * typically {@code @Scheduled} ones:
 *
 * <pre>
 * &#64;Scheduled(fixedDelay = 10_000)
 * &#64;LeaderOnly("reports")
 * void publishReports() { ... }
 * </pre>
 *
 * The check is made when the method is called: a method that runs on while the term is
 * revoked is not stopped. Writes it makes should carry the term's token through a fence
 * ({@link LeaderElection#currentToken()}).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {

	/** The election's name. */
	String value();

}
