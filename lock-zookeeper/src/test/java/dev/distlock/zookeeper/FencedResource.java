package dev.distlock.zookeeper;

import java.util.concurrent.atomic.AtomicLong;

/**
 * A resource that accepts a write only with a fencing token at least as high as any it
 * has seen: a stale holder's write is rejected.
 */
final class FencedResource {

	private final AtomicLong highest = new AtomicLong();

	/**
	 * @return whether the write was accepted
	 */
	boolean write(long token) {
		long seen = this.highest.accumulateAndGet(token, Math::max);
		return seen == token;
	}

}
