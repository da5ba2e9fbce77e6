package dev.distlock.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Import;
import org.springframework.test.context.TestPropertySource;

/**
 * On a Spring Boot test class: locks live in this JVM's memory (the in-memory store, as
 * {@code distributed-lock.store=in-memory} selects), so the test needs no Redis, and a
 * {@link LockRecorder} bean records every acquisition for assertions. The locking itself
 * is the real machinery (waiting, re-entry, leases, renewal, fencing tokens); only the
 * store is local.
 *
 * <pre>
 * &#64;SpringBootTest
 * &#64;AutoConfigureInMemoryLocks
 * class OrderServiceTests { ... }
 * </pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@TestPropertySource(properties = "distributed-lock.store=in-memory")
@Import(LockRecorder.class)
public @interface AutoConfigureInMemoryLocks {

}
