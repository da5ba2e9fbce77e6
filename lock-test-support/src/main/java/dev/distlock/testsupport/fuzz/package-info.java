/**
 * Cross-JVM tools for any store: a read-pause-write
 * {@link dev.distlock.testsupport.fuzz.FuzzLoop} run by threads here and in a second JVM
 * ({@link dev.distlock.testsupport.fuzz.FuzzWorker}), and holder JVMs to kill with
 * {@code kill -9} ({@link dev.distlock.testsupport.fuzz.LockHolder}) or stop with
 * {@code SIGSTOP} ({@link dev.distlock.testsupport.fuzz.PausedHolder}, writing to a
 * {@link dev.distlock.testsupport.fuzz.FencedRegister}). The store plugs in through a
 * {@link dev.distlock.testsupport.ProviderFactory}; see
 * {@code docs/contributing/testing.md}.
 */
@NullMarked
package dev.distlock.testsupport.fuzz;

import org.jspecify.annotations.NullMarked;
