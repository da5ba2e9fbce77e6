package dev.distlock.sample;

import java.util.List;

import dev.distlock.harness.redis.RedisServer;
import org.jspecify.annotations.Nullable;

/**
 * {@link AbstractOversellEndToEndTests} with the sample as it ships: stock and locks in
 * one real redis-server.
 */
class OversellEndToEndTests extends AbstractOversellEndToEndTests {

	private @Nullable RedisServer redis;

	@Override
	void startServers() {
		this.redis = RedisServer.start();
	}

	@Override
	void stopServers() {
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Override
	List<String> instanceArguments() {
		RedisServer redis = this.redis;
		return List.of("--spring.data.redis.host=" + redis.host(), "--spring.data.redis.port=" + redis.port(),
				"--sample.work-pause=10ms");
	}

}
