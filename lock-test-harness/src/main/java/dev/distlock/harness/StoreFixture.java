package dev.distlock.harness;

import java.util.Map;

/**
 * A store started for a test, with the resources its workloads write to, described so
 * that a child JVM can reach both: the factories' classes and plain settings (addresses,
 * ports). The fault harness's {@link dev.distlock.harness.fault.FaultTarget} is one; the
 * cross-JVM tests of {@code dev.distlock.harness.fuzz} take one from the store's
 * subclass. Closing it stops what it started.
 */
public interface StoreFixture extends AutoCloseable {

	/** Makes the lock providers, in the test JVM and in child JVMs. */
	Class<? extends ProviderFactory> providerFactory();

	/** Makes the resources, in the test JVM and in child JVMs. */
	Class<? extends ResourceFactory> resourceFactory();

	/**
	 * The settings both factories get, in every JVM: addresses and ports, never objects.
	 */
	Map<String, String> settings();

	/**
	 * The settings plus the factories' class names, as a child JVM's command line needs
	 * them ({@link WorkerArgs#PROVIDER}, {@link WorkerArgs#RESOURCES}).
	 */
	default Map<String, String> childSettings() {
		Map<String, String> settings = new java.util.LinkedHashMap<>(settings());
		settings.put(WorkerArgs.PROVIDER, providerFactory().getName());
		settings.put(WorkerArgs.RESOURCES, resourceFactory().getName());
		return settings;
	}

	/**
	 * A new provider factory of this store ({@link ProviderFactory#create} not yet
	 * called).
	 */
	default ProviderFactory newProviderFactory() {
		return WorkerArgs.instance(providerFactory());
	}

	/** A new resource factory of this store. */
	default ResourceFactory newResourceFactory() {
		return WorkerArgs.instance(resourceFactory());
	}

	/** Stops what the fixture started. */
	@Override
	void close();

}
