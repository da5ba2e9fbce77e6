package dev.distlock.support;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

/** A task on a thread of its own, named, so that a test can watch and interrupt it. */
final class Waiter<T> {

	final Thread thread;

	final CompletableFuture<T> result = new CompletableFuture<>();

	private Waiter(String name, Callable<T> task) {
		this.thread = new Thread(() -> {
			try {
				this.result.complete(task.call());
			}
			catch (Throwable ex) {
				this.result.completeExceptionally(ex);
			}
		}, name);
		this.thread.setDaemon(true);
	}

	static <T> Waiter<T> start(String name, Callable<T> task) {
		Waiter<T> waiter = new Waiter<>(name, task);
		waiter.thread.start();
		return waiter;
	}

}
