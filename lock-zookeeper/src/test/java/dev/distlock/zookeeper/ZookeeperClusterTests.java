package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A three-server ensemble (in-process): the leader, then a follower, is killed while one
 * client holds a lock and another waits for it. Sessions move to the surviving servers,
 * so the holder keeps its lock (no loss is reported), the waiter gets it on release, and
 * fencing tokens keep rising.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperClusterTests {

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private final List<String> losses = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	private <T extends AutoCloseable> T closing(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	private final List<ZookeeperLockProvider> providers = new ArrayList<>();

	private DefaultLockTemplate template(String connectString) {
		ZookeeperLockProvider provider = closing(
				new ZookeeperLockProvider(closing(TestZookeeper.client(connectString))));
		this.providers.add(provider);
		RenewalScheduler scheduler = closing(new RenewalScheduler());
		return closing(
				new DefaultLockTemplate(provider, scheduler, TestZookeeper.templateDefaults(Duration.ofSeconds(60)),
						(lease, reason, holder) -> this.losses.add(lease.key() + ": " + reason), false));
	}

	@Test
	void theLeaderThenAFollowerDiesWhileALockIsHeldAndWaitedFor() throws Exception {
		TestingCluster cluster = closing(TestZookeeper.cluster(3));
		String connectString = cluster.getConnectString();
		DefaultLockTemplate first = template(connectString);
		DefaultLockTemplate second = template(connectString);
		String key = "cluster-lock";
		long token = 0;
		DefaultLockTemplate holder = first;
		DefaultLockTemplate waiter = second;
		for (String role : List.of("leader", "follower")) {
			Lease held = holder.acquire(key, LockOptions.defaults());
			assertThat(held.fencingToken()).isGreaterThan(token);
			DefaultLockTemplate waiting = waiter;
			// While the ensemble elects a leader, a waiter's call may fail within the
			// store
			// timeout (LockBackendException: the store did not answer, never "busy"); the
			// waiter asks again, as an application would.
			CompletableFuture<Lease> waited = CompletableFuture.supplyAsync(() -> {
				while (true) {
					try {
						return waiting.acquire(key, LockOptions.defaults());
					}
					catch (LockBackendException ex) {
						// the election is still going on: ask again
					}
				}
			}, TestThreads.EACH);
			InstanceSpec victim = serverIn(cluster, role);
			assertThat(cluster.killServer(victim)).as("killed the " + role).isTrue();
			Conditions.await("a leader among the survivors", Duration.ofSeconds(60),
					() -> cluster.getInstances()
						.stream()
						.anyMatch((spec) -> TestZookeeper.mode(spec).equals("leader")));
			Conditions.await("both clients are connected again", Duration.ofSeconds(60),
					() -> this.providers.stream().allMatch((provider) -> provider.session().isConnected()));
			assertThat(held.isHeld()).as("the lock after the " + role + " died").isTrue();
			assertThat(waited).as("the waiter, while the lock is held").isNotDone();
			held.release();
			Lease next = waited.get(60, TimeUnit.SECONDS);
			assertThat(next.fencingToken()).isGreaterThan(held.fencingToken());
			token = next.fencingToken();
			next.release();
			assertThat(cluster.restartServer(victim)).isTrue();
			holder = (holder == first) ? second : first;
			waiter = (waiter == first) ? second : first;
		}
		assertThat(this.losses).isEmpty();
	}

	private static InstanceSpec serverIn(TestingCluster cluster, String role) {
		InstanceSpec[] found = new InstanceSpec[1];
		Conditions.await("a " + role + " in the ensemble", Duration.ofSeconds(60), () -> {
			for (InstanceSpec spec : cluster.getInstances()) {
				if (TestZookeeper.mode(spec).equals(role)) {
					found[0] = spec;
					return true;
				}
			}
			return false;
		});
		return found[0];
	}

}
