package dev.distlock.autoconfigure.ops;

import dev.distlock.LockTemplate;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.springframework.context.annotation.Bean;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.utility.DockerImageName;

/**
 * The Testcontainers setup shown in {@code docs/testing.md}, compiled by the build so the
 * page cannot drift from the API. Not run here: it needs Docker, which the build machines
 * do not have; its name does not match the test runner's patterns on purpose.
 * {@link ConnectionDetailsTests} shows, without Docker, that the lock lands on the server
 * that connection details name, which is all {@code @ServiceConnection} does.
 */
@SpringBootTest
class RedisContainerExample {

	@TestConfiguration(proxyBeanMethods = false)
	static class RedisContainerConfiguration {

		@Bean
		@ServiceConnection(name = "redis")
		GenericContainer<?> redis() {
			return new GenericContainer<>(DockerImageName.parse("redis:7-alpine")).withExposedPorts(6379);
		}

	}

	@Autowired
	LockTemplate locks;

	@org.junit.jupiter.api.Test
	void locksInTheContainer() {
		this.locks.run("order:42", () -> {
			// runs while holding the lock, in the container's Redis
		});
	}

}
