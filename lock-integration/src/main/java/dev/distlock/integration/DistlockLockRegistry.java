package dev.distlock.integration;

import dev.distlock.KeyLock;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;

import org.springframework.integration.support.locks.DistributedLock;
import org.springframework.integration.support.locks.LockRegistry;

/**
 * A Spring Integration {@link LockRegistry} whose locks are distlock locks, taken through
 * a {@link LockTemplate}: leader election ({@code LockRegistryLeaderInitiator}),
 * aggregators and {@code executeLocked} then lock across JVMs in any distlock store, with
 * its fencing tokens, renewal and loss detection.
 *
 * <p>
 * Each {@link #obtain(Object)} returns a new {@link RegistryLock}, a {@link KeyLock} view
 * of the key: hold and release a lock through the same object, as Spring Integration's
 * components do. Locks are owned by the thread that took them ({@code unlock()} elsewhere
 * throws {@link IllegalMonitorStateException}) and are re-entrant for it, also through
 * another object for the same key. Conditions are not supported. Lock keys are the
 * store's keys behind an optional prefix: with none (the default) they are the keys of
 * {@code @DistributedLock}.
 */
public final class DistlockLockRegistry implements LockRegistry<DistributedLock> {

	private final LockTemplate template;

	private final LockOptions options;

	private final String keyPrefix;

	/** A registry whose locks use the template's configured lease time and auto-renew. */
	public DistlockLockRegistry(LockTemplate template) {
		this(template, LockOptions.defaults(), "");
	}

	/**
	 * A registry whose locks use {@code options} (each call's wait replaces its wait
	 * time) and whose keys are prefixed with {@code keyPrefix} in the store.
	 */
	public DistlockLockRegistry(LockTemplate template, LockOptions options, String keyPrefix) {
		this.template = template;
		this.options = options;
		this.keyPrefix = keyPrefix;
	}

	/**
	 * A lock of {@code lockKey}, which must be a non-blank {@link String}.
	 * @throws IllegalArgumentException for any other key
	 */
	@Override
	public RegistryLock obtain(Object lockKey) {
		if (!(lockKey instanceof String key) || key.isBlank()) {
			throw new IllegalArgumentException("A distlock LockRegistry key must be a non-blank String, but was "
					+ ((lockKey != null) ? lockKey.getClass().getName() + " '" + lockKey + "'" : "null"));
		}
		return new RegistryLock(KeyLock.of(this.template, this.keyPrefix + key, this.options));
	}

	@Override
	public String toString() {
		return "DistlockLockRegistry[keyPrefix='" + this.keyPrefix + "']";
	}

}
