/**
 * The public API: {@link dev.distlock.DistributedLock},
 * {@link dev.distlock.LockTemplate}, {@link dev.distlock.LockOptions},
 * {@link dev.distlock.Lease}, {@link dev.distlock.LockContext} and the exceptions.
 */
@NullMarked
package dev.distlock;

import org.jspecify.annotations.NullMarked;
