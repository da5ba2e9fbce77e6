/**
 * Spring Integration on distlock: a {@code LockRegistry} whose locks come from a distlock
 * {@code LockTemplate}, for leader election, aggregators and {@code executeLocked}.
 */
@NullMarked
package dev.distlock.integration;

import org.jspecify.annotations.NullMarked;
