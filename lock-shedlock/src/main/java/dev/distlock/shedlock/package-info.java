/**
 * ShedLock on distlock: a ShedLock {@code LockProvider} that takes its locks from any
 * distlock store, so {@code @SchedulerLock} jobs get fencing tokens and loss detection.
 */
@NullMarked
package dev.distlock.shedlock;

import org.jspecify.annotations.NullMarked;
