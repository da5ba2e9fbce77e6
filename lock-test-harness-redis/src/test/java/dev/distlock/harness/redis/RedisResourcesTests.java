package dev.distlock.harness.redis;

import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

import dev.distlock.harness.fault.FencedResource;
import dev.distlock.harness.fuzz.FencedRegister;
import dev.distlock.harness.fuzz.SharedCounter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The harness's resources in Redis fence as the checkers assume: an older token is
 * refused entry and its writes rejected once a newer one entered or wrote, and an
 * interrupted caller still gets its reply.
 */
@Tag("server")
class RedisResourcesTests {

	private static RedisServer server;

	private static Map<String, String> settings;

	@BeforeAll
	static void start() {
		server = RedisServer.start();
		settings = RedisResources.settings(server);
	}

	@AfterAll
	static void stop() {
		server.close();
	}

	@Test
	void theResourceRefusesAndRejectsOlderTokensOnceANewerOneEntered() {
		try (FencedResource resource = new RedisResources().fencedResource(settings)) {
			FencedResource.Entry newer = resource.enter("r1", 5);
			assertThat(newer).isEqualTo(new FencedResource.Entry(1, true, 0));
			FencedResource.Entry older = resource.enter("r1", 3);
			assertThat(older.admitted()).isFalse();
			assertThat(older.occupancy()).as("two inside").isEqualTo(2);
			resource.exit("r1");
			resource.exit("r1");
			assertThat(resource.write("r1", 3, 100)).as("older write").isFalse();
			assertThat(resource.write("r1", 5, 1)).isTrue();
			assertThat(resource.write("r1", 5, 2)).as("the same holder again").isTrue();
			assertThat(resource.enter("r1", 7)).isEqualTo(new FencedResource.Entry(1, true, 2));
			assertThat(resource.write("r1", 5, 3)).as("write of a holder fenced out by a newer entry").isFalse();
			assertThat(resource.accepted("r1")).isEqualTo(2);
			assertThat(resource.value("r1")).isEqualTo(2);
			assertThat(resource.value("untouched")).isZero();
		}
	}

	@Test
	void anInterruptedCallerStillGetsItsReplyAndKeepsItsInterrupt() {
		try (FencedResource resource = new RedisResources().fencedResource(settings)) {
			Thread.currentThread().interrupt();
			try {
				assertThat(resource.write("r2", 1, 1)).isTrue();
				assertThat(Thread.currentThread().isInterrupted()).isTrue();
			}
			finally {
				Thread.interrupted();
			}
			assertThat(resource.accepted("r2")).isEqualTo(1);
		}
	}

	@Test
	void theRegisterRejectsOlderTokensAndLogsAcceptedOnes() {
		try (FencedRegister register = new RedisResources().fencedRegister(settings)) {
			assertThat(register.value()).isNull();
			assertThat(register.write(2, "a")).isTrue();
			assertThat(register.write(1, "stale")).isFalse();
			assertThat(register.write(2, "b")).isTrue();
			assertThat(register.write(4, "c")).isTrue();
			assertThat(register.acceptedTokens()).isEqualTo(List.of(2L, 2L, 4L));
			assertThat(register.rejected()).isEqualTo(1);
			assertThat(register.value()).isEqualTo("c");
		}
	}

	@Test
	void theCounterCountsHoldersInsideAndKeepsItsValue() {
		try (SharedCounter counter = new RedisResources().sharedCounter(settings)) {
			assertThat(counter.read()).isZero();
			assertThat(counter.enter()).isEqualTo(1);
			assertThat(counter.enter()).isEqualTo(2);
			counter.exit();
			assertThat(counter.inside()).isEqualTo(1);
			counter.exit();
			counter.write(41);
			assertThat(counter.read()).isEqualTo(41);
			assertThat(counter.inside()).isZero();
		}
	}

	@Test
	void anErrorReplyAndAnUnreachableServerAreNamed() {
		try (RespClient client = new RespClient(server.host(), server.port())) {
			assertThatIllegalStateException().isThrownBy(() -> client.call("NOSUCHCOMMAND"))
				.withMessageContaining("Redis error")
				.withMessageContaining("NOSUCHCOMMAND");
		}
		int closedPort;
		try (RedisServer gone = RedisServer.start()) {
			closedPort = gone.port();
		}
		try (RespClient client = new RespClient("127.0.0.1", closedPort)) {
			assertThatExceptionOfType(UncheckedIOException.class).isThrownBy(() -> client.call("PING"))
				.withMessageContaining("127.0.0.1:" + closedPort);
		}
	}

}
