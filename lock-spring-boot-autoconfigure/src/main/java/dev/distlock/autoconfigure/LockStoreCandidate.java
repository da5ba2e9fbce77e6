package dev.distlock.autoconfigure;

import java.util.List;

/**
 * A lock store that is available to this application: registered by each store's
 * auto-configuration when its library and its connection are there and
 * {@code distributed-lock.store} does not name another store. With more than one and no
 * {@code distributed-lock.store}, startup fails, naming that property.
 *
 * @param name the store's name, as {@code distributed-lock.store} takes it
 */
public record LockStoreCandidate(String name) {

	/** Every store name {@code distributed-lock.store} accepts. */
	public static final List<String> NAMES = List.of("redis", "redlock", "jdbc", "zookeeper", "in-memory");

}
