package dev.distlock.testsupport;

import java.util.Map;

import dev.distlock.spi.LockProvider;

/**
 * Builds a store's {@link LockProvider} from plain settings, in the test JVM or in a
 * child JVM ({@link ChildJvm}) that knows nothing but the factory's class name and the
 * settings on its command line. The fault harness
 * ({@code dev.distlock.testsupport.fault}) and the cross-JVM tools
 * ({@code dev.distlock.testsupport.fuzz}) take one per store, so that every store runs
 * the same workloads and checkers.
 *
 * <p>
 * One instance makes one provider: {@link #create} is called once, {@link #close} closes
 * the provider and whatever {@code create} opened for it (connections, pools, sessions).
 * Implementations need a public no-argument constructor. The settings are the ones the
 * test put on the command line (see {@link WorkerArgs}), such as the store's port, plus
 * those the harness adds (the fault run's lease, whether the client keeps its defaults).
 */
public interface ProviderFactory extends AutoCloseable {

	/**
	 * Connects to the store the settings name and returns a provider over it, as an
	 * application instance would have one: with an owner identity of its own.
	 */
	LockProvider create(Map<String, String> settings);

	/**
	 * What the provider still holds in this JVM beyond what the template tracks, counted
	 * once every holder and waiter has finished: for Redis, keys with a release
	 * subscriber. 0 when nothing leaked, and by default.
	 */
	default int leftOver() {
		return 0;
	}

	/** Closes the provider and everything {@link #create} opened. */
	@Override
	void close();

}
