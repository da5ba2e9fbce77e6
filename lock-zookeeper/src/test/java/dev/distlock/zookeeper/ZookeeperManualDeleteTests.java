package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A lock's node deleted by another client (an operator's {@code delete}), on a real
 * server: the holder hears of it at release, never a normal release while another client
 * holds the lock.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperManualDeleteTests {

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	@Test
	void aNodeDeletedByAnotherClientIsALostLeaseAtRelease() throws Exception {
		String key = "deleted-by-hand";
		ZookeeperLockProvider provider = this.clients.provider(this.clients.client());
		RenewalScheduler scheduler = this.clients.closing(new RenewalScheduler());
		DefaultLockTemplate template = this.clients.closing(
				new DefaultLockTemplate(provider, scheduler, TestZookeeper.templateDefaults(Duration.ofSeconds(5))));
		CuratorFramework operator = this.clients.client();
		ZookeeperLockProvider other = this.clients.provider(operator);
		Lease lease = template.acquire(key, LockOptions.defaults());
		List<String> nodes = operator.getChildren().forPath(provider.nodes().parentPath(key));
		assertThat(nodes).hasSize(1);
		operator.delete().forPath(provider.nodes().parentPath(key) + "/" + nodes.get(0));
		LockAttempt taken = LockAttempt.join(other.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30))));
		assertThat(taken).isInstanceOf(LockAttempt.Acquired.class);
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lease::release)
			.withMessageContaining("was lost while held");
		assertThat(lease.isHeld()).isFalse();
		LockHandle otherHandle = ((LockAttempt.Acquired) taken).handle();
		assertThat(otherHandle.release()).isTrue();
	}

	/**
	 * The release's delete goes to the session's own ZooKeeper handle, past Curator: it
	 * must find the node under the client's namespace as Curator's create put it there.
	 */
	@Test
	void aReleaseOnANamespacedClientFindsItsNode() throws Exception {
		String key = "namespaced";
		CuratorFramework client = this.clients.client();
		ZookeeperLockProvider provider = this.clients.provider(client.usingNamespace("app"));
		LockAttempt attempt = LockAttempt.join(provider.tryLock(LockRequest.exclusive(key, Duration.ofSeconds(30))));
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		LockHandle handle = ((LockAttempt.Acquired) attempt).handle();
		String node = "/app" + ((ZookeeperLockHandle) handle).path();
		assertThat(client.checkExists().forPath(node)).isNotNull();
		assertThat(handle.release()).isTrue();
		assertThat(client.checkExists().forPath(node)).isNull();
	}

}
