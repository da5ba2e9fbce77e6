package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.DistributedLatch;
import dev.distlock.DistributedLatch.CountDown;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.TcpProxy;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Countdown latches on ZooKeeper beyond the published contract: a participant counted
 * before its connection dropped is not counted again when it retries on the new
 * connection, and a latch outlives the session that armed it (it is no ephemeral node).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperLatchTests {

	private static final Duration EXPIRY = Duration.ofMinutes(1);

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	private TcpProxy proxy;

	@BeforeEach
	void start() {
		this.proxy = this.clients.closing(TcpProxy.start(this.clients.server.getPort()));
	}

	private DefaultLockTemplate template(CuratorFramework client) {
		return this.clients.closing(new DefaultLockTemplate(this.clients.provider(client),
				this.clients.closing(new RenewalScheduler()), TestZookeeper.templateDefaults(Duration.ofSeconds(5))));
	}

	@Test
	void aCountDownRetriedOnANewConnectionCountsOnce() {
		String key = "latch-" + UUID.randomUUID();
		CuratorFramework proxied = this.clients.closing(TestZookeeper.client(this.proxy.connectString()));
		DistributedLatch latch = template(proxied).latch(key, 2, EXPIRY);
		DistributedLatch elsewhere = template(this.clients.client()).latch(key, 2, EXPIRY);
		assertThat(latch.countDown("worker-1")).isEqualTo(CountDown.COUNTED);
		this.proxy.disconnectAll();
		Conditions.await("the client reconnects", Duration.ofSeconds(20),
				() -> proxied.getZookeeperClient().isConnected());
		assertThat(latch.countDown("worker-1")).as("the retry on the new connection")
			.isEqualTo(CountDown.ALREADY_COUNTED);
		assertThat(elsewhere.getCount()).isEqualTo(1);
		assertThat(elsewhere.countDown("worker-2")).isEqualTo(CountDown.COUNTED);
		assertThat(latch.getCount()).isZero();
	}

	@Test
	void aLatchOutlivesTheSessionThatArmedIt() throws Exception {
		String key = "latch-" + UUID.randomUUID();
		CuratorFramework creator = this.clients.client();
		DistributedLatch armed = template(creator).latch(key, 2, EXPIRY);
		assertThat(armed.countDown("worker-1")).isEqualTo(CountDown.COUNTED);
		TestZookeeper.expireSession(creator);
		DistributedLatch elsewhere = template(this.clients.client()).latch(key, 2, EXPIRY);
		assertThat(elsewhere.generation()).isEqualTo(armed.generation());
		assertThat(elsewhere.getCount()).isEqualTo(1);
	}

}
