/**
 * The fault harness, for any store: a {@link dev.distlock.harness.fault.Workload} of
 * fenced read-increment-write operations over a {@link dev.distlock.spi.LockProvider},
 * run in this JVM and in a worker JVM while a store's
 * {@link dev.distlock.harness.fault.FaultScenario} injects faults, and the checkers of
 * {@link dev.distlock.harness.fault.FaultReport} (overlaps, crowded entries, stale
 * writes, wrong fencing, lost updates, leaks, call bounds). A store supplies its servers
 * and leak check ({@link dev.distlock.harness.fault.FaultTarget}), its provider
 * ({@link dev.distlock.harness.ProviderFactory}) and its faults; see
 * {@code docs/contributing/testing.md}.
 */
@NullMarked
package dev.distlock.harness.fault;

import org.jspecify.annotations.NullMarked;
