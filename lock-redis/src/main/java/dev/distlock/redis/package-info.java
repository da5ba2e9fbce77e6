/**
 * The Redis provider: Lua scripts run by SHA, per-acquisition owner tokens, fencing
 * counters.
 */
@NullMarked
package dev.distlock.redis;

import org.jspecify.annotations.NullMarked;
