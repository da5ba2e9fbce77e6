/**
 * The contract suites a store proves itself with: JUnit 5 test classes to extend, one per
 * primitive ({@link dev.distlock.contract.AbstractLockProviderContractTests} for every
 * {@link dev.distlock.spi.LockProvider}, the others for the primitives the store
 * supports), and the condition waits they use ({@link dev.distlock.contract.Conditions}).
 */
package dev.distlock.contract;
