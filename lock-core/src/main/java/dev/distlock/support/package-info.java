/**
 * Store-neutral machinery: the waiting loop and backoff, leases and their renewal,
 * reentrancy.
 */
@NullMarked
package dev.distlock.support;

import org.jspecify.annotations.NullMarked;
