package dev.distlock.redis;

import java.time.Duration;
import java.util.Random;

import dev.distlock.harness.FaultProxy;
import dev.distlock.harness.fault.AbstractFamilyNetworkFaultTests;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Tag;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Read-write locks and semaphores on Redis under the mutex's network faults
 * ({@link AbstractFamilyNetworkFaultTests}): two "JVMs" reach a redis-server of this
 * class's own through a {@link FaultProxy} (replies delayed past a third of the lease, a
 * partition longer than the lease, a dropped reply with a reset, every connection cut), a
 * third directly.
 */
@Tag("server")
class RedisRwSemaphoreFaultTests extends AbstractFamilyNetworkFaultTests {

	private RedisServer server;

	private FaultProxy proxy;

	@Override
	protected void startStore() {
		this.server = RedisServer.start();
		this.proxy = FaultProxy.start(this.server.host(), this.server.port());
	}

	@Override
	protected LockProvider provider(boolean proxied) {
		LettuceConnectionFactory factory = proxied
				? TestRedis.connectionFactory(this.proxy.host(), this.proxy.port(), Duration.ofSeconds(60))
				: TestRedis.connectionFactory(this.server);
		closeAfter(factory::destroy);
		return closeAfter(new RedisLockProvider(factory, "lock:", false));
	}

	@Override
	protected void injectFault(Random random) {
		switch (random.nextInt(4)) {
			case 0 -> {
				this.proxy.delayReplies(LEASE.dividedBy(3));
				lastOut(LEASE);
			}
			case 1 -> {
				this.proxy.blackhole();
				lastOut(LEASE.multipliedBy(3).dividedBy(2));
			}
			case 2 -> this.proxy.dropNextReplyAndReset();
			default -> this.proxy.disconnectAll();
		}
	}

	@Override
	protected void heal() {
		this.proxy.heal();
	}

	@Override
	protected void stopStore() {
		this.proxy.close();
		this.server.close();
	}

	@Override
	protected long seed() {
		return 11;
	}

}
