/**
 * The project's own test harness, not published: child JVMs
 * ({@link dev.distlock.harness.ChildJvm}), the fault proxy and its log, and the plain
 * settings through which a store plugs into the fault and fuzz tools
 * ({@link dev.distlock.harness.ProviderFactory},
 * {@link dev.distlock.harness.ResourceFactory},
 * {@link dev.distlock.harness.StoreFixture}).
 */
package dev.distlock.harness;
