/**
 * Fault checks of the lock family, store-neutral: a multi-key lock is never held in part,
 * and a latch never opens early, while a store fault is injected and healed.
 */
@NullMarked
package dev.distlock.harness.family;

import org.jspecify.annotations.NullMarked;
