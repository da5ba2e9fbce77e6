package dev.distlock.harness.redis;

import java.util.List;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@Tag("server")
class RedisServerTests {

	@Test
	void startsAnswersAndStopsOnAFreePort() {
		RedisServer server = RedisServer.start();
		try {
			assertThat(server.port()).isNotEqualTo(6379);
			assertThat(server.command("PING")).isEqualTo("+PONG");
			assertThat(server.command("SET", "k", "v")).isEqualTo("+OK");
			assertThat(server.command("GET", "k")).isEqualTo("v");
		}
		finally {
			server.close();
		}
		assertThat(server.isAlive()).isFalse();
	}

	@Test
	void restartKeepsTheAppendOnlyFile() {
		try (RedisServer server = RedisServer.start("--appendonly", "yes", "--appendfsync", "always")) {
			server.command("SET", "k", "v");
			server.kill();
			try (RedisServer again = server.restart()) {
				assertThat(again.command("GET", "k")).isEqualTo("v");
				assertThat(again.port()).isEqualTo(server.port());
			}
		}
	}

	@Test
	void theDefaultBundledBinaryIsRedis7AndRedis62StaysReachable() {
		try (RedisServer redis7 = RedisServer.start(RedisVersion.V7_0);
				RedisServer redis62 = RedisServer.start(RedisVersion.V6_2)) {
			assertThat(redis7.version()).isEqualTo("7.0.15");
			assertThat(redis62.version()).startsWith("6.2.");
		}
		if (System.getenv("DISTLOCK_REDIS_SERVER") == null && System.getProperty("DISTLOCK_REDIS_SERVER") == null
				&& !onPath()) {
			assertThat(RedisServerBinary.resolve()).isEqualTo(RedisServerBinary.resolve(RedisVersion.V7_0));
		}
	}

	@Test
	void aClusterOfEitherVersionStarts() {
		// Redis 2.8 has no cluster mode; it is bundled only to be refused.
		for (RedisVersion version : List.of(RedisVersion.V6_2, RedisVersion.V7_0)) {
			try (RedisCluster cluster = RedisCluster.start(version, 3)) {
				assertThat(cluster.nodes()).hasSize(3)
					.allSatisfy((node) -> assertThat(node.version())
						.startsWith((version == RedisVersion.V7_0) ? "7.0." : "6.2."));
			}
		}
	}

	private static boolean onPath() {
		String path = System.getenv("PATH");
		return path != null && java.util.Arrays.stream(path.split(java.io.File.pathSeparator))
			.anyMatch((dir) -> java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, "redis-server")));
	}

}
