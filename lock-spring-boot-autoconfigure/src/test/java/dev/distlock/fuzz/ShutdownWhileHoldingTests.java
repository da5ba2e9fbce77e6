package dev.distlock.fuzz;

import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.harness.ChildJvm;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JVM stopped (SIGTERM, as an orchestrator stops an instance) while it holds a lock
 * releases the lock on its way down and stops renewing it, so other instances need not
 * wait out the lease.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Tag("server")
class ShutdownWhileHoldingTests {

	@Test
	void aJvmStoppedWhileHoldingReleasesTheLockAndStopsRenewal() throws Exception {
		try (RedisServer server = RedisServer.start()) {
			String key = "jvm-stop-" + UUID.randomUUID();
			try (ChildJvm holder = ChildJvm.start(ShutdownHolder.class, Integer.toString(server.port()), key)) {
				holder.awaitLine("HELD ", Duration.ofSeconds(60));
				assertThat(server.command("EXISTS", "lock:" + key)).isEqualTo(":1");
				long stop = System.nanoTime();
				holder.signal("TERM");
				assertThat(holder.awaitLine("STOPPED ", Duration.ofSeconds(30)))
					.isEqualTo("STOPPED pending-renewals=0 held=false");
				holder.awaitExit(Duration.ofSeconds(30));
				assertThat(server.command("EXISTS", "lock:" + key)).as("the lock after the JVM stopped")
					.isEqualTo(":0");
				assertThat(Duration.ofNanos(System.nanoTime() - stop)).as("far less than the 60s lease")
					.isLessThan(Duration.ofSeconds(30));
			}
		}
	}

}
