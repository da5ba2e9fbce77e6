/**
 * Orders against stock kept in Redis, with and without
 * {@link dev.distlock.DistributedLock}.
 */
@NullMarked
package dev.distlock.sample.order;

import org.jspecify.annotations.NullMarked;
