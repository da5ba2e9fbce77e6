/**
 * {@link dev.distlock.config.EnableDistributedLocks}: {@code @DistributedLock} for Spring
 * applications without Spring Boot.
 */
@NullMarked
package dev.distlock.config;

import org.jspecify.annotations.NullMarked;
