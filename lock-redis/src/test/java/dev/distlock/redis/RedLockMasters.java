package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;

/**
 * N independent {@code redis-server} processes on free loopback ports, as RedLock's
 * masters, and providers over them; each provider has connections of its own, as another
 * JVM would. Masters can be killed, restarted empty and paused one by one.
 */
final class RedLockMasters implements AutoCloseable {

	static final String PREFIX = "redlock:";

	private final List<RedisServer> servers = new ArrayList<>();

	private final List<RedLockProvider> providers = new ArrayList<>();

	private RedLockMasters(int count) {
		for (int i = 0; i < count; i++) {
			this.servers.add(RedisServer.start());
		}
	}

	static RedLockMasters start(int count) {
		return new RedLockMasters(count);
	}

	int count() {
		return this.servers.size();
	}

	/** How many masters may fail with the lock still working: N minus a quorum. */
	int minority() {
		return count() - (count() / 2 + 1);
	}

	RedisServer server(int index) {
		return this.servers.get(index);
	}

	List<String> uris() {
		return this.servers.stream().map(RedisServer::uri).toList();
	}

	/** A provider with the default store timeout; closed with the masters. */
	RedLockProvider provider() {
		return provider(RedisLockProvider.DEFAULT_STORE_TIMEOUT);
	}

	RedLockProvider provider(Duration storeTimeout) {
		return provider(uris(), storeTimeout);
	}

	/** A provider over other addresses of the masters (proxies in front of them). */
	RedLockProvider provider(List<String> uris, Duration storeTimeout) {
		RedLockProvider provider = RedLockProvider.connect(uris, PREFIX, storeTimeout);
		this.providers.add(provider);
		awaitAnswers(provider);
		return provider;
	}

	/**
	 * Waits until every master answers the provider: its connections come up in the
	 * background, and an acquire returns once a quorum answered, so a master whose
	 * connection is not up yet would silently hold no lock of the first acquisitions (and
	 * a test whose first lease is shorter than a cold handshake would find no quorum).
	 */
	private void awaitAnswers(RedLockProvider provider) {
		Conditions.await("every master answers", Duration.ofSeconds(30), () -> {
			String key = "warm-up-" + UUID.randomUUID();
			try {
				if (LockAttempt.join(provider.tryLock(
						LockRequest.exclusive(key, Duration.ofSeconds(10)))) instanceof LockAttempt.Acquired acquired) {
					boolean everywhere = holdersOf(key) == count();
					acquired.handle().release();
					return everywhere;
				}
				return false;
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
	}

	/** How many live masters hold the key, in RedLock's key space. */
	long holdersOf(String key) {
		return this.servers.stream()
			.filter(RedisServer::isAlive)
			.filter((server) -> server.command("EXISTS", PREFIX + key).equals(":1"))
			.count();
	}

	void kill(int index) {
		this.servers.get(index).kill();
	}

	/** Restarts a killed master on its port, empty (persistence is off). */
	void restart(int index) {
		this.servers.set(index, this.servers.get(index).restart());
	}

	/** Whether any master still has the key, in RedLock's key space. */
	boolean anyMasterHas(String key) {
		return holdersOf(key) > 0;
	}

	@Override
	public void close() {
		this.providers.forEach(RedLockProvider::close);
		this.servers.forEach(RedisServer::close);
	}

}
