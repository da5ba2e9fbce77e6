package dev.distlock.inmemory;

import dev.distlock.spi.LockHandle;

/**
 * A read hold or a permit: the handle is the owner, by identity (no value equality, so
 * two holds never stand for each other in the maps that key on them).
 */
abstract class SharedHold implements LockHandle {

	final String key;

	private final long fencingToken;

	SharedHold(String key, long fencingToken) {
		this.key = key;
		this.fencingToken = fencingToken;
	}

	@Override
	public String key() {
		return this.key;
	}

	@Override
	public long fencingToken() {
		return this.fencingToken;
	}

	@Override
	public String toString() {
		return "InMemory" + getClass().getSimpleName() + "[key=" + this.key + ", token=" + this.fencingToken + "]";
	}

}
