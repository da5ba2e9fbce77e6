package dev.distlock.support;

import java.util.Set;
import java.util.concurrent.CompletionStage;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;

/**
 * The in-memory store behind the SPI of a store with release signals, for a test's store
 * to change one part of (how an attempt travels, how holds are released).
 */
abstract class SignallingMemory implements ReleaseSignalling {

	final InMemoryLockProvider store;

	SignallingMemory(InMemoryLockProvider store) {
		this.store = store;
	}

	@Override
	public Set<LockKind> kinds() {
		return this.store.kinds();
	}

	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return this.store.tryLock(request);
	}

	@Override
	public void withdraw(LockRequest request) {
		this.store.withdraw(request);
	}

	@Override
	public ReleaseSignals releaseSignals() {
		return this.store.releaseSignals();
	}

}
