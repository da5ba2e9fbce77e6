package dev.distlock.docs;

import java.io.IOException;

import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.postgresql.PostgreSQLContainer;
import org.testcontainers.utility.DockerImageName;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import dev.distlock.LockTemplate;
// @formatter:off
import dev.distlock.test.AutoConfigureInMemoryLocks;
import dev.distlock.test.LockRecorder;

@SpringBootTest
@AutoConfigureInMemoryLocks
class OrderServiceTests {

	@Autowired OrderService orders;

	@Autowired LockRecorder locks;

	@BeforeEach
	void clear() {
		this.locks.clear();
	}

	@Test
	void shippingLocksTheOrder() {
		this.orders.ship(42);
		this.locks.assertAcquiredExactly("order:42");   // the keys this call locked, in order
		this.locks.assertAllReleased();
	}

}
// @formatter:on

class OrderService {

	void ship(long orderId) {
	}

}

/**
 * The code of {@code docs/testing.md}. The test classes are compiled, never run: the
 * module's pom keeps this package out of the test runs.
 */
class TestingPage {

	// @formatter:off
	@SpringBootTest
	class OrderServiceContainerTests {

		@TestConfiguration(proxyBeanMethods = false)
		static class RedisContainerConfiguration {

			@Bean
			@ServiceConnection(name = "redis")
			GenericContainer<?> redis() {
				return new GenericContainer<>(DockerImageName.parse("redis:7-alpine")).withExposedPorts(6379);
			}

		}

		@Autowired LockTemplate locks;

		@Test
		void locksInTheContainer() {
			this.locks.run("order:42", () -> { /* runs holding the lock, in the container's Redis */ });
		}

	}
	// @formatter:on

	// @formatter:off
	@TestConfiguration(proxyBeanMethods = false)
	class DatabaseContainerConfiguration {

		@Bean
		@ServiceConnection
		PostgreSQLContainer postgres() {                  // org.testcontainers.postgresql
			return new PostgreSQLContainer(DockerImageName.parse("postgres:17"));
		}

	}
	// @formatter:on

	// @formatter:off
	@SpringBootTest(properties = "distributed-lock.store=zookeeper")   // needed only with Redis on the class path too
	@DirtiesContext                                                      // the context must not outlive the server
	class OrderServiceZookeeperTests {

		static TestingServer zookeeper;

		@BeforeAll
		static void startZookeeper() throws Exception {
			zookeeper = new TestingServer();
		}

		@AfterAll
		static void stopZookeeper() throws IOException {
			zookeeper.close();
		}

		@DynamicPropertySource
		static void zookeeperProperties(DynamicPropertyRegistry registry) {
			registry.add("distributed-lock.zookeeper.connect-string", () -> zookeeper.getConnectString());
		}

		@Autowired LockTemplate locks;

		@Test
		void locksInZookeeper() {
			this.locks.run("order:42", () -> { /* runs holding the lock, in the test server */ });
		}

	}
	// @formatter:on

}
