package dev.distlock.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.support.DefaultLockTemplate;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMultiLock;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;

import org.springframework.integration.support.locks.LockRegistry;

/**
 * A library as the family benchmark drives it: the read and write sides of a read-write
 * lock, one permit of a semaphore, and several keys at once. A member a library does not
 * offer throws {@link UnsupportedOperationException} and its cells stay empty. One
 * instance is one client (one connection pool or one ZooKeeper session), shared by its
 * threads.
 */
interface FamilyLib extends AutoCloseable {

	String name();

	/** The read side ({@code read}) or the write side of {@code key}, blocking. */
	Lib.Unlock readWrite(String key, boolean read) throws Exception;

	/** One permit of the semaphore {@code key} of {@code permits} permits, blocking. */
	Lib.Unlock permit(String key, int permits) throws Exception;

	/** Every one of {@code keys} (sorted), blocking. */
	Lib.Unlock all(List<String> keys) throws Exception;

	@Override
	void close();

	/** distlock's template, over whichever store it was built on. */
	final class Distlock implements FamilyLib {

		private static final LockOptions READ = LockOptions.builder().mode(LockMode.READ).build();

		private final String name;

		private final DefaultLockTemplate template;

		private final Map<Integer, LockOptions> permitOptions = new ConcurrentHashMap<>();

		private final AutoCloseable resources;

		Distlock(String name, DefaultLockTemplate template, AutoCloseable resources) {
			this.name = name;
			this.template = template;
			this.resources = resources;
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public Lib.Unlock readWrite(String key, boolean read) {
			Lease lease = this.template.acquire(key, read ? READ : LockOptions.defaults());
			return lease::release;
		}

		@Override
		public Lib.Unlock permit(String key, int permits) {
			LockOptions options = this.permitOptions.computeIfAbsent(permits,
					(n) -> LockOptions.builder().permits(n).build());
			Lease lease = this.template.acquire(key, options);
			return lease::release;
		}

		@Override
		public Lib.Unlock all(List<String> keys) {
			MultiLease lease = this.template.acquireAll(keys, LockOptions.defaults());
			return lease::release;
		}

		@Override
		public void close() {
			this.template.close();
			try {
				this.resources.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

	/**
	 * Curator's recipes, one instance per key (or key set) and client, shared by its
	 * threads: {@code InterProcessReadWriteLock}, {@code InterProcessSemaphoreV2} and
	 * {@code InterProcessMultiLock}.
	 */
	final class Curator implements FamilyLib {

		private final CuratorFramework client;

		private final Map<String, InterProcessReadWriteLock> readWrite = new ConcurrentHashMap<>();

		private final Map<String, InterProcessSemaphoreV2> semaphores = new ConcurrentHashMap<>();

		private final Map<List<String>, InterProcessMultiLock> multi = new ConcurrentHashMap<>();

		Curator(String connect) {
			this.client = ZookeeperBenchmark.startedClient(connect);
		}

		@Override
		public String name() {
			return "curator";
		}

		@Override
		public Lib.Unlock readWrite(String key, boolean read) throws Exception {
			InterProcessReadWriteLock lock = this.readWrite.computeIfAbsent(key,
					(k) -> new InterProcessReadWriteLock(this.client, "/curator-rw/" + k));
			InterProcessMutex side = read ? lock.readLock() : lock.writeLock();
			side.acquire();
			return side::release;
		}

		@Override
		public Lib.Unlock permit(String key, int permits) throws Exception {
			InterProcessSemaphoreV2 semaphore = this.semaphores.computeIfAbsent(key,
					(k) -> new InterProcessSemaphoreV2(this.client, "/curator-semaphores/" + k, permits));
			org.apache.curator.framework.recipes.locks.Lease lease = semaphore.acquire();
			return () -> semaphore.returnLease(lease);
		}

		@Override
		public Lib.Unlock all(List<String> keys) throws Exception {
			InterProcessMultiLock lock = this.multi.computeIfAbsent(keys, (k) -> {
				List<String> paths = new ArrayList<>();
				for (String key : k) {
					paths.add("/curator-locks/" + key);
				}
				return new InterProcessMultiLock(this.client, paths);
			});
			lock.acquire();
			return lock::release;
		}

		@Override
		public void close() {
			this.client.close();
		}

	}

	/**
	 * A Spring Integration lock registry (one lock per key, {@code java.util.concurrent}
	 * style), taking several keys one by one in sorted order; it has no read-write lock
	 * or semaphore.
	 */
	final class Registry implements FamilyLib {

		private final String name;

		private final LockRegistry<?> registry;

		private final AutoCloseable resources;

		Registry(String name, LockRegistry<?> registry, AutoCloseable resources) {
			this.name = name;
			this.registry = registry;
			this.resources = resources;
		}

		@Override
		public String name() {
			return this.name;
		}

		@Override
		public Lib.Unlock readWrite(String key, boolean read) {
			throw new UnsupportedOperationException("no read-write lock");
		}

		@Override
		public Lib.Unlock permit(String key, int permits) {
			throw new UnsupportedOperationException("no semaphore");
		}

		@Override
		public Lib.Unlock all(List<String> keys) throws InterruptedException {
			List<Lock> taken = new ArrayList<>(keys.size());
			try {
				for (String key : keys) {
					Lock lock = this.registry.obtain(key);
					if (!lock.tryLock(60, TimeUnit.SECONDS)) {
						throw new IllegalStateException("Not acquired in 60 s: " + key);
					}
					taken.add(lock);
				}
			}
			catch (InterruptedException | RuntimeException ex) {
				unlock(taken);
				throw ex;
			}
			return () -> unlock(taken);
		}

		private static void unlock(List<Lock> taken) {
			for (int i = taken.size() - 1; i >= 0; i--) {
				taken.get(i).unlock();
			}
		}

		@Override
		public void close() {
			try {
				this.resources.close();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		}

	}

}
