package dev.distlock.support;

import java.time.Duration;

import dev.distlock.spi.LockHandle;

/**
 * A store's handle passed through, for the test stores that count, delay or fail some of
 * its calls: each overrides those.
 */
class DelegatingHandle implements LockHandle {

	private final LockHandle handle;

	DelegatingHandle(LockHandle handle) {
		this.handle = handle;
	}

	@Override
	public String key() {
		return this.handle.key();
	}

	@Override
	public long fencingToken() {
		return this.handle.fencingToken();
	}

	@Override
	public boolean renew(Duration leaseTime) {
		return this.handle.renew(leaseTime);
	}

	@Override
	public boolean release() {
		return this.handle.release();
	}

}
