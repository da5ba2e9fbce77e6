package dev.distlock.testsupport;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

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

}
