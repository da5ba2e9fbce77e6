package dev.distlock.autoconfigure.aot;

import java.util.Map;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.test.InstanceSpec;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application on the ZooKeeper store (Curator's in-process ZooKeeper server), with the
 * client built from {@code distributed-lock.zookeeper.*}, processed ahead of time and
 * started in AOT mode, locks through annotated methods with a named option set and the
 * annotation attributes of the whole lock family, multi-key locks included.
 */
@CompileWithForkedClassLoader
@Tag("server")
class ZookeeperAotTests {

	@Test
	void annotatedMethodsLockInZookeeperInAotMode() throws Exception {
		System.setProperty("zookeeper.admin.enableServer", "false");
		try (TestingServer server = new TestingServer(new InstanceSpec(null, -1, -1, -1, true, -1, -1, -1,
				Map.of("clientPortAddress", "127.0.0.1", "admin.enableServer", "false"), "127.0.0.1"), true)) {
			AheadOfTime.run(App.class,
					AheadOfTime.with(AotServices.STOCK, "distributed-lock.store=zookeeper",
							"distributed-lock.zookeeper.connect-string=" + server.getConnectString(),
							"distributed-lock.zookeeper.base-path=/aot-locks"),
					(context) -> {
						CuratorFramework client = context.getBean(CuratorFramework.class);
						assertThat(context.getBean(AotServices.Orders.class)
							.ship("in-zookeeper", () -> exists(client, "/aot-locks/stock%3Ain-zookeeper")))
							.as("the key's node while the method runs")
							.isTrue();
						AotServices.locksThroughANamedSet(context);
						AotServices.locksTheFamily(context);
						AotServices.locksSeveralKeys(context);
					});
		}
	}

	private static boolean exists(CuratorFramework client, String path) {
		try {
			return client.checkExists().forPath(path) != null;
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(exclude = DataSourceAutoConfiguration.class)
	@Import({ AotServices.Orders.class, AotServices.Catalog.class, AotServices.Transfers.class })
	static class App {

	}

}
