package dev.distlock.support;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.MultiLease;
import dev.distlock.OnLeaseLost;
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.ScopedLease;
import org.jspecify.annotations.Nullable;

/**
 * A {@link MultiLease} made of one lease per key: a {@link ManagedLease} for each key
 * taken by the acquire (renewed by the shared scheduler, whose batching sends them in one
 * call per batch, since they were taken together), or a {@link NestedLease} for a key the
 * thread already held in a scope.
 *
 * <p>
 * Release asks every part, in reverse key order, whatever happens to the others, sending
 * each part's release before it awaits any answer, then reports the first failure (a loss
 * before a store error), with the rest suppressed.
 */
final class DefaultMultiLease implements MultiLease, ScopedLease {

	private final List<String> keys;

	private final List<Lease> parts;

	private final AtomicBoolean released = new AtomicBoolean();

	/**
	 * @param keys the keys, sorted and distinct
	 * @param parts one lease per key, in the same order
	 */
	DefaultMultiLease(List<String> keys, List<Lease> parts) {
		this.keys = List.copyOf(keys);
		this.parts = List.copyOf(parts);
	}

	/** The lease of each key, in key order. */
	List<Lease> parts() {
		return this.parts;
	}

	/** The managed lease behind a part, whether direct or nested. */
	static @Nullable ManagedLease managed(Lease part) {
		if (part instanceof ManagedLease managed) {
			return managed;
		}
		return (part instanceof NestedLease nested) ? nested.outer() : null;
	}

	@Override
	public List<String> keys() {
		return this.keys;
	}

	@Override
	public long fencingToken(String key) {
		int index = this.keys.indexOf(key);
		if (index < 0) {
			throw new IllegalArgumentException("'" + key + "' is not one of the keys of this lease " + this.keys);
		}
		return this.parts.get(index).fencingToken();
	}

	@Override
	public String key() {
		return String.join(",", this.keys);
	}

	@Override
	public long fencingToken() {
		return this.parts.get(0).fencingToken();
	}

	@Override
	public boolean isHeld() {
		if (this.released.get()) {
			return false;
		}
		for (Lease part : this.parts) {
			if (!part.isHeld()) {
				return false;
			}
		}
		return true;
	}

	@Override
	public void release() {
		if (!this.released.compareAndSet(false, true)) {
			return;
		}
		// Every part's release is sent before any answer is awaited: a store that
		// releases asynchronously answers all of them in about one round trip. Releases
		// that can only block run here, one after another, as they are asked for.
		// A store that releases holds together gets those needing no more than its
		// release in one call.
		List<Lease> parts = reversed(this.parts);
		Deferred blocking = new Deferred();
		BatchRelease store = storeReleasingTogether(parts);
		List<LeaseEnd.Together> together = (store != null) ? new ArrayList<>() : null;
		List<CompletableFuture<Void>> answers = new ArrayList<>(parts.size());
		for (Lease part : parts) {
			try {
				answers.add((part instanceof ManagedLease managed) ? LeaseEnd.releaseAsync(managed, blocking, together)
						: LeaseEnd.onWorker(blocking, part::release));
			}
			catch (RuntimeException ex) {
				answers.add(CompletableFuture.failedFuture(ex));
			}
		}
		if (store != null) {
			LeaseEnd.releaseTogether(together, store, blocking);
		}
		blocking.runUntil(answers);
		RuntimeException lost = null;
		RuntimeException failed = null;
		for (CompletableFuture<Void> answer : answers) {
			try {
				answer.join();
			}
			catch (CompletionException ex) {
				RuntimeException cause = (ex.getCause() instanceof RuntimeException runtime) ? runtime : ex;
				if (cause instanceof LeaseLostException) {
					lost = merge(lost, cause);
				}
				else {
					failed = merge(failed, cause);
				}
			}
		}
		if (lost != null) {
			if (failed != null) {
				lost.addSuppressed(failed);
			}
			throw lost;
		}
		if (failed != null) {
			throw failed;
		}
	}

	/**
	 * The store of every part taken by this lease's acquire, if it releases holds
	 * together and more than one part is such a hold.
	 */
	private static @Nullable BatchRelease storeReleasingTogether(List<Lease> parts) {
		LockProvider store = null;
		int held = 0;
		for (Lease part : parts) {
			if (part instanceof ManagedLease managed) {
				if (store != null && store != managed.provider()) {
					return null;
				}
				store = managed.provider();
				held++;
			}
		}
		return (held > 1 && store instanceof BatchRelease batch && batch.releasesHoldsTogether()) ? batch : null;
	}

	private static RuntimeException merge(@Nullable RuntimeException first, RuntimeException next) {
		if (first == null) {
			return next;
		}
		// Parts released in one store call share that call's failure.
		if (first != next) {
			first.addSuppressed(next);
		}
		return first;
	}

	private static List<Lease> reversed(List<Lease> leases) {
		List<Lease> reversed = new ArrayList<>(leases);
		java.util.Collections.reverse(reversed);
		return reversed;
	}

	/** Whether the keys this lease took wait for an active transaction to complete. */
	boolean releaseAfterCommit() {
		for (Lease part : this.parts) {
			if (part instanceof ManagedLease managed) {
				return managed.releaseAfterCommit();
			}
		}
		return false;
	}

	/**
	 * Inside an active transaction: every key this lease took is released once the
	 * transaction has completed (and renewed until then); re-entered keys now. Every part
	 * is handed on, whatever happens to the others.
	 */
	void releaseAfterCompletion() {
		if (!this.released.compareAndSet(false, true)) {
			return;
		}
		RuntimeException failure = null;
		for (Lease part : reversed(this.parts)) {
			try {
				if (part instanceof ManagedLease managed) {
					TransactionBoundRelease.releaseAfterCompletion(managed);
				}
				else {
					part.release();
				}
			}
			catch (RuntimeException ex) {
				failure = merge(failure, ex);
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	/** What a loss does to a call holding this lease: the first taken key's setting. */
	OnLeaseLost onLeaseLost() {
		for (Lease part : this.parts) {
			ManagedLease managed = managed(part);
			if (managed != null) {
				return managed.onLeaseLost();
			}
		}
		return OnLeaseLost.FAIL_ON_EXIT;
	}

	@Override
	public void scopeOpened() {
		for (Lease part : this.parts) {
			if (part instanceof ScopedLease scoped) {
				scoped.scopeOpened();
			}
		}
	}

	@Override
	public void scopeClosed() {
		for (Lease part : this.parts) {
			if (part instanceof ScopedLease scoped) {
				scoped.scopeClosed();
			}
		}
	}

	@Override
	public String toString() {
		return "MultiLease" + this.parts;
	}

	/**
	 * Where the parts of one multi-key release run what can only block: on the releasing
	 * thread, never on the thread of a store's client that asked for it (which may be the
	 * one that must deliver the answer), with the releasing thread's interrupt set aside
	 * (an interrupted holder still releases).
	 */
	private static final class Deferred implements Executor {

		private static final Runnable ANSWERED = () -> {
		};

		private final LinkedBlockingQueue<Runnable> tasks = new LinkedBlockingQueue<>();

		@Override
		public void execute(Runnable task) {
			this.tasks.add(task);
		}

		/**
		 * Runs the tasks given, as they come, until every one of {@code answers} is in.
		 */
		void runUntil(List<CompletableFuture<Void>> answers) {
			CompletableFuture<Void> all = CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new));
			all.whenComplete((done, failure) -> this.tasks.add(ANSWERED));
			boolean interrupted = Thread.interrupted();
			try {
				while (true) {
					Runnable task;
					try {
						task = this.tasks.take();
					}
					catch (InterruptedException ex) {
						interrupted = true;
						continue;
					}
					if (task == ANSWERED) {
						return;
					}
					try {
						task.run();
					}
					catch (RuntimeException ex) {
						// A part's release carries its failure in its own answer.
					}
				}
			}
			finally {
				if (interrupted) {
					Thread.currentThread().interrupt();
				}
			}
		}

	}

}
