package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Stream;

import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * An acquire given up on (the store timeout passed while Redis was paused) runs when
 * Redis resumes, and what it took is given back: no hold is left for an owner nobody
 * knows. The hard case is the one each test sets up: Redis has the release script cached
 * but not the acquire's (as after a restart or failover that has since seen a release),
 * so the acquire comes back {@code NOSCRIPT} and is sent again whole, behind the undo
 * sent when the caller gave up; that undo finds nothing, and only an undo sent once the
 * acquire has answered gives the hold back. Default client settings, the documented store
 * timeout, and a lease of a minute, so a hold left behind is still there when the test
 * looks.
 */
@Tag("server")
class LateAcquireUndoTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final String PREFIX = "lock:";

	private final RedisKeys keys = new RedisKeys(PREFIX, false);

	private RedisServer redis;

	private LettuceConnectionFactory factory;

	private RedisLockProvider provider;

	@BeforeEach
	void start() {
		this.redis = RedisServer.start();
		this.factory = StoreUnavailableTests.defaultClient(this.redis.port());
		this.provider = new RedisLockProvider(this.factory, PREFIX, false);
		TestRedis.awaitAnswers(this.provider);
	}

	@AfterEach
	void stop() {
		this.redis.resume();
		this.provider.close();
		this.factory.destroy();
		this.redis.close();
	}

	static Stream<Arguments> primitives() {
		return Stream.of(Arguments.of("mutex", LockScripts.RELEASE, (Function<String, List<String>>) List::of),
				Arguments.of("write lock", LockScripts.RELEASE, (Function<String, List<String>>) List::of),
				Arguments.of("read lock", RwSemaphoreScripts.READ_RELEASE, (Function<String, List<String>>) List::of),
				Arguments.of("permit", RwSemaphoreScripts.PERMIT_RELEASE,
						(Function<String, List<String>>) (key) -> List.of(key + ":permits")),
				Arguments.of("multi-key lock", FamilyScripts.RELEASE_ALL,
						(Function<String, List<String>>) (key) -> List.of(key + "-a", key + "-b")));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("primitives")
	void anAcquireThatRunsAfterItsCallerGaveUpIsGivenBack(String primitive, RedisScript<?> release,
			Function<String, List<String>> heldKeys) {
		String key = "late-" + UUID.randomUUID();
		this.redis.command("SCRIPT", "FLUSH");
		this.redis.command("SCRIPT", "LOAD", release.getScriptAsString());
		long evalsBefore = evalCalls();
		this.redis.pause();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> acquire(primitive, key))
			.withMessageContaining("did not answer");
		this.redis.resume();
		Conditions.await("the acquire sent again whole after NOSCRIPT has run", Duration.ofSeconds(10),
				() -> evalCalls() > evalsBefore);
		List<String> redisKeys = heldKeys.apply(key).stream().map(this::redisKey).toList();
		Conditions.await("the late acquire given back", Duration.ofSeconds(10), () -> present(redisKeys).isEmpty());
		assertThat(present(redisKeys)).isEmpty();
	}

	private void acquire(String primitive, String key) {
		switch (primitive) {
			case "mutex" -> LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LEASE)));
			case "write lock" -> LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LEASE)
				.withWriter(UUID.randomUUID().toString(), LEASE)
				.withIntentRecorded(true)));
			case "read lock" -> LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LEASE)));
			case "permit" -> LockAttempt.join(this.provider.tryLock(LockRequest.permit(key, 2, LEASE)));
			case "multi-key lock" ->
				LockAttempt.join(this.provider.tryLock(LockRequest.all(List.of(key + "-a", key + "-b"), LEASE)));
			default -> throw new IllegalArgumentException(primitive);
		}
	}

	/** The Redis key holding what {@code name} names: a lock key, or a semaphore's. */
	private String redisKey(String name) {
		if (name.endsWith(":permits")) {
			return this.keys.permitsKey(this.keys.lockKey(name.substring(0, name.length() - ":permits".length())));
		}
		return this.keys.lockKey(name);
	}

	private List<String> present(List<String> redisKeys) {
		return redisKeys.stream().filter((redisKey) -> ":1".equals(this.redis.command("EXISTS", redisKey))).toList();
	}

	private long evalCalls() {
		return evalCalls(this.redis);
	}

	/** The {@code EVAL} calls {@code redis} has run so far. */
	static long evalCalls(RedisServer redis) {
		return redis.command("INFO", "commandstats")
			.lines()
			.filter((line) -> line.startsWith("cmdstat_eval:"))
			.map((line) -> line.replaceAll("^cmdstat_eval:calls=(\\d+),.*", "$1"))
			.mapToLong(Long::parseLong)
			.findFirst()
			.orElse(0);
	}

}
