package dev.distlock.harness.fault;

import java.time.Duration;
import java.util.Map;

import dev.distlock.harness.StoreFixture;

/**
 * A store's servers for one fault run, as its {@link FaultScenario} started them: where
 * the clients reach the lock store (through a {@link dev.distlock.harness.FaultProxy},
 * typically), the fenced resource that no fault touches, and how to find what the run
 * left in the store. The harness talks to the store only through the providers the
 * {@link #providerFactory()} makes; faults reach the servers through the target itself.
 */
public interface FaultTarget extends StoreFixture {

	/**
	 * The settings both factories get, in both JVMs: addresses and ports, never objects.
	 * The run adds {@link FaultRun#LEASE_MILLIS} and {@link FaultRun#CLIENT_DEFAULTS}.
	 */
	@Override
	Map<String, String> settings();

	/**
	 * Locks, queues, sessions or rows still in the store once every holder and waiter of
	 * every JVM is gone, each described in {@code detail}: 0 when nothing leaked. May
	 * wait (for a lease, a session timeout) until the store has had time to expire what a
	 * dead client left, but no longer than it promises to.
	 * @param lease the run's lease time
	 */
	int leftInStore(Duration lease, StringBuilder detail);

}
