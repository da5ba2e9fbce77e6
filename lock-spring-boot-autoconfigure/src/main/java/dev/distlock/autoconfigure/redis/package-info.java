/**
 * Auto-configuration of the Redis store.
 */
@NullMarked
package dev.distlock.autoconfigure.redis;

import org.jspecify.annotations.NullMarked;
