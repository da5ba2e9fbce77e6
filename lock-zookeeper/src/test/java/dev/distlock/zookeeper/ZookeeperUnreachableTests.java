package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * ZooKeeper not reachable when the application starts (its server stopped): the provider
 * says so in plain words, naming the servers, once rather than at every call, and never
 * speaks of a session in doubt before there was one; once the server runs, locks work.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperUnreachableTests {

	private final Logger log = (Logger) LoggerFactory.getLogger(SessionGuard.class);

	private final ListAppender<ILoggingEvent> capture = new ListAppender<>();

	@BeforeEach
	void captureLog() {
		this.capture.start();
		this.log.addAppender(this.capture);
	}

	@AfterEach
	void releaseLog() {
		this.log.detachAppender(this.capture);
	}

	private List<String> logged() {
		return this.capture.list.stream().map((event) -> event.getLevel() + " " + event.getFormattedMessage()).toList();
	}

	@Test
	void aStoppedServerIsSaidToBeUnreachableOnceAndNoSessionIsInDoubt() throws Exception {
		TestingServer stopped = TestZookeeper.server();
		int port = stopped.getPort();
		stopped.close();
		String servers = "127.0.0.1:" + port;
		CuratorFramework client = CuratorFrameworkFactory.newClient(servers, new ExponentialBackoffRetry(100, 5));
		client.start();
		try (client;
				ZookeeperLockProvider provider = new ZookeeperLockProvider(client,
						ZookeeperLockProvider.DEFAULT_BASE_PATH, Duration.ofMillis(300))) {
			for (int call = 0; call < 3; call++) {
				assertThatExceptionOfType(LockBackendException.class)
					.isThrownBy(() -> LockAttempt
						.join(provider.tryLock(LockRequest.exclusive("unreachable", Duration.ofSeconds(30)))))
					.withMessageContaining("ZooKeeper at " + servers + " cannot be reached yet")
					.withMessageNotContaining("doubt");
			}
			assertThat(logged()).as("what the provider logged")
				.singleElement()
				.asString()
				.startsWith("WARN ZooKeeper at " + servers + " cannot be reached yet")
				.doesNotContain("doubt");
			try (TestingServer server = new TestingServer(
					new InstanceSpec(null, port, -1, -1, true, -1, -1, -1,
							Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false"), "127.0.0.1"),
					true)) {
				Conditions.await("a lock is granted once the server runs", Duration.ofSeconds(30),
						() -> granted(provider));
				assertThat(logged()).last().asString().startsWith("INFO ZooKeeper at " + servers + " reached");
			}
		}
	}

	private static boolean granted(ZookeeperLockProvider provider) {
		try {
			if (LockAttempt.join(provider.tryLock(LockRequest.exclusive("unreachable",
					Duration.ofSeconds(30)))) instanceof LockAttempt.Acquired acquired) {
				return acquired.handle().release();
			}
			return false;
		}
		catch (LockBackendException ex) {
			// still connecting
			return false;
		}
	}

}
