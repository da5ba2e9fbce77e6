/**
 * Cross-JVM tools for any store: a read-pause-write
 * {@link dev.distlock.harness.fuzz.FuzzLoop} run by threads here and in a second JVM
 * ({@link dev.distlock.harness.fuzz.FuzzWorker}), and holder JVMs to kill with
 * {@code kill -9} ({@link dev.distlock.harness.fuzz.LockHolder}) or stop with
 * {@code SIGSTOP} ({@link dev.distlock.harness.fuzz.PausedHolder}, writing to a
 * {@link dev.distlock.harness.fuzz.FencedRegister}). The store plugs in through a
 * {@link dev.distlock.harness.ProviderFactory}; see {@code docs/contributing/testing.md}.
 */
@NullMarked
package dev.distlock.harness.fuzz;

import org.jspecify.annotations.NullMarked;
