/**
 * Starts (or shares) a real redis-server when the sample runs without Redis
 * configuration.
 */
@NullMarked
package dev.distlock.sample.redis;

import org.jspecify.annotations.NullMarked;
