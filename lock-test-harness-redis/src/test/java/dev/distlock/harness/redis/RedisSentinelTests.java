package dev.distlock.harness.redis;

import java.time.Duration;

import dev.distlock.contract.Conditions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Sentinel deployment. The default build starts one, looks the master up and stops it
 * (a few seconds); both failovers ({@code SENTINEL FAILOVER}, then the new master killed,
 * about 20 s) run with {@code -Psoak} ({@code -Ddistlock.soak=true}). The default build
 * also runs one {@link RedisSentinel#failover()} in the auto-configuration's
 * {@code SentinelFailoverTests}.
 */
@Tag("server")
class RedisSentinelTests {

	@Test
	void sentinelsSeeTheMasterAndTheReplicaFollowsIt() {
		RedisSentinel deployment = RedisSentinel.start();
		try {
			assertSentinelsSeeTheMasterAndTheReplicaFollowsIt(deployment);
		}
		finally {
			deployment.close();
		}
		assertAllStopped(deployment);
	}

	@Test
	@EnabledIfSystemProperty(named = "distlock.soak", matches = "true")
	void sentinelsSeeTheMasterAndEitherFailoverPromotesTheReplica() {
		RedisSentinel deployment = RedisSentinel.start();
		try {
			assertSentinelsSeeTheMasterAndTheReplicaFollowsIt(deployment);
			RedisServer first = deployment.master();
			RedisServer second = deployment.replica();

			RedisServer promoted = deployment.failover();
			assertThat(promoted).isSameAs(second);
			assertThat(promoted.command("SET", "after", "2")).as("the promoted replica takes writes").isEqualTo("+OK");
			deployment.awaitReplicaOf(first, promoted);
			Conditions.await("the demoted master has the new master's write", Duration.ofSeconds(10),
					() -> "2".equals(first.command("GET", "after")));

			promoted.kill();
			assertThat(deployment.awaitFailoverFrom(promoted)).isSameAs(first);
			assertThat(first.command("INFO", "replication")).contains("role:master");
			assertThat(first.command("GET", "after")).isEqualTo("2");
		}
		finally {
			deployment.close();
		}
		assertAllStopped(deployment);
	}

	private static void assertSentinelsSeeTheMasterAndTheReplicaFollowsIt(RedisSentinel deployment) {
		RedisServer first = deployment.master();
		RedisServer second = deployment.replica();
		assertThat(deployment.servers()).containsExactly(first, second);
		assertThat(deployment.nodes().split(",")).hasSize(3)
			.allSatisfy((node) -> assertThat(node).startsWith("127.0.0.1:"));
		assertThat(deployment.sentinels()).allSatisfy((sentinel) -> assertThat(sentinel.command("INFO", "sentinel"))
			.contains("name=" + deployment.masterName() + ",status=ok,address=127.0.0.1:" + first.port()
					+ ",slaves=1,sentinels=3"));
		assertThat(first.command("SET", "before", "1")).isEqualTo("+OK");
		Conditions.await("the replica has the write", Duration.ofSeconds(10),
				() -> "1".equals(second.command("GET", "before")));
	}

	private static void assertAllStopped(RedisSentinel deployment) {
		assertThat(deployment.sentinels()).noneMatch(RedisServer::isAlive);
		assertThat(deployment.servers()).noneMatch(RedisServer::isAlive);
	}

}
