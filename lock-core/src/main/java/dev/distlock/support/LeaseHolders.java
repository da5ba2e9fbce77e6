package dev.distlock.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * Which threads hold one lease: those running a scope of it
 * ({@link dev.distlock.LockContext#open}), and, while no other thread has used the lease,
 * the thread that acquired it. Re-entry is granted only inside a scope, so a lease handed
 * to another thread never lets its first thread back in; a loss is told to the holders.
 */
final class LeaseHolders {

	private final @Nullable Thread acquirer;

	/**
	 * @param acquirer the thread that acquired the lease (or took it over in memory);
	 * null for a lease acquired by a wait that held no thread, which only scopes hold
	 */
	LeaseHolders(@Nullable Thread acquirer) {
		this.acquirer = acquirer;
	}

	/** Threads running a scope of the lease, with how many scopes each has open. */
	private final Map<Thread, Integer> scopes = new ConcurrentHashMap<>();

	/** Another thread than the acquirer has used the lease. */
	private volatile boolean handedOver;

	/** The current thread used the lease (asked for its state or token, released it). */
	void used() {
		if (Thread.currentThread() != this.acquirer) {
			this.handedOver = true;
		}
	}

	void scopeOpened() {
		used();
		this.scopes.merge(Thread.currentThread(), 1, Integer::sum);
	}

	void scopeClosed() {
		this.scopes.computeIfPresent(Thread.currentThread(), (thread, open) -> (open == 1) ? null : open - 1);
	}

	/** Whether the current thread runs a scope of the lease. */
	boolean inScope() {
		return this.scopes.containsKey(Thread.currentThread());
	}

	/**
	 * Whether the current thread acquired the lease, never handed it on, and runs no
	 * scope of it.
	 */
	boolean acquiredOutsideAnyScope() {
		return this.acquirer == Thread.currentThread() && !this.handedOver && !inScope();
	}

	/**
	 * The threads to tell of a loss: those running a scope of the lease, else the
	 * acquiring thread if the lease never left it.
	 */
	List<Thread> toTell() {
		List<Thread> holders = new ArrayList<>(this.scopes.keySet());
		if (holders.isEmpty() && !this.handedOver && this.acquirer != null) {
			holders.add(this.acquirer);
		}
		return holders;
	}

}
