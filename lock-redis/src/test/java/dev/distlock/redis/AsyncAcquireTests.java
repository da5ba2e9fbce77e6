package dev.distlock.redis;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Stream;

import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockRequest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link RedisLockProvider#tryLock} returns before Redis answers, for every kind of lock:
 * with the server frozen (SIGSTOP), the answer is still pending when the call returns,
 * fails at the store timeout with the store-timeout message, and what the acquire takes
 * when the server resumes is given back. As in {@link LateAcquireUndoTests}, Redis has
 * the release script cached but not the acquire's, so the acquire comes back
 * {@code NOSCRIPT} and is sent again whole behind the undo sent at the deadline: only the
 * undo sent after the late reply can give the hold back. The client's default settings;
 * the store timeout is shortened (the setting under test), and the lease is a minute, so
 * a hold left behind is still there when the test looks.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("server")
class AsyncAcquireTests {

	private static final Duration STORE_TIMEOUT = Duration.ofSeconds(2);

	private static final Duration LEASE = Duration.ofMinutes(1);

	private static final String PREFIX = "lock:";

	private final RedisKeys keys = new RedisKeys(PREFIX, false);

	private RedisServer redis;

	private LettuceConnectionFactory factory;

	private RedisLockProvider provider;

	private void start(boolean connected) {
		this.redis = RedisServer.start();
		this.factory = StoreUnavailableTests.defaultClient(this.redis.port());
		if (!connected) {
			this.redis.pause();
		}
		this.provider = new RedisLockProvider(this.factory, PREFIX, false, 0, Duration.ZERO, STORE_TIMEOUT);
		if (connected) {
			TestRedis.awaitAnswers(this.provider);
		}
	}

	@AfterEach
	void stop() {
		this.redis.resume();
		this.provider.close();
		this.factory.destroy();
		this.redis.close();
	}

	static Stream<Arguments> kinds() {
		Function<String, List<String>> lockKey = List::of;
		return Stream.of(
				Arguments.of("plain", "acquire", LockScripts.RELEASE, lockKey,
						(Function<String, LockRequest>) (key) -> LockRequest.exclusive(key, LEASE)),
				Arguments.of("token block", "acquire", LockScripts.RELEASE, lockKey,
						(Function<String, LockRequest>) (key) -> LockRequest.exclusive(key, LEASE).withTokens(8)),
				Arguments.of("writer", "write-lock", LockScripts.RELEASE, lockKey,
						(Function<String, LockRequest>) (key) -> LockRequest.exclusive(key, LEASE)
							.withWriter(UUID.randomUUID().toString(), LEASE)
							.withIntentRecorded(true)),
				Arguments.of("writer's token block", "acquire", LockScripts.RELEASE, lockKey,
						(Function<String, LockRequest>) (key) -> LockRequest.exclusive(key, LEASE)
							.withTokens(8)
							.withWriter(UUID.randomUUID().toString(), LEASE)),
				Arguments.of("fair", "acquire", LockScripts.RELEASE, lockKey,
						(Function<String, LockRequest>) (key) -> LockRequest.fair(key, LEASE,
								UUID.randomUUID().toString(), LEASE)),
				Arguments.of("shared", "read-lock", RwSemaphoreScripts.READ_RELEASE, lockKey,
						(Function<String, LockRequest>) (key) -> LockRequest.shared(key, LEASE)),
				Arguments.of("permits", "take a permit of", RwSemaphoreScripts.PERMIT_RELEASE,
						(Function<String, List<String>>) (key) -> List.of(key + ":permits"),
						(Function<String, LockRequest>) (key) -> LockRequest.permit(key, 2, LEASE)),
				Arguments.of("multi", "acquire", FamilyScripts.RELEASE_ALL,
						(Function<String, List<String>>) (key) -> List.of(key + "-a", key + "-b"),
						(Function<String, LockRequest>) (key) -> LockRequest.all(List.of(key + "-a", key + "-b"),
								LEASE)));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("kinds")
	void theAnswerIsPendingWhileRedisIsHungFailsAtTheStoreTimeoutAndTheLateAcquireIsGivenBack(String kind,
			String operation, RedisScript<?> release, Function<String, List<String>> heldKeys,
			Function<String, LockRequest> request) {
		start(true);
		String key = "async-" + UUID.randomUUID();
		LockRequest asked = request.apply(key);
		this.redis.command("SCRIPT", "FLUSH");
		this.redis.command("SCRIPT", "LOAD", release.getScriptAsString());
		long evalsBefore = LateAcquireUndoTests.evalCalls(this.redis);
		this.redis.pause();
		CompletableFuture<LockAttempt> answer = this.provider.tryLock(asked).toCompletableFuture();
		assertThat(answer).as("the answer when tryLock returns, Redis frozen").isNotDone();
		String named = (asked.keys().size() > 1) ? String.join(",", asked.keys()) : key;
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> LockAttempt.join(answer))
			.withMessage("Redis did not answer within " + STORE_TIMEOUT.toMillis()
					+ "ms (distributed-lock.store-timeout) to " + operation + " lock '" + named + "'");
		this.redis.resume();
		Conditions.await("the acquire sent again whole after NOSCRIPT has run", Duration.ofSeconds(10),
				() -> LateAcquireUndoTests.evalCalls(this.redis) > evalsBefore);
		List<String> redisKeys = heldKeys.apply(key).stream().map(this::redisKey).toList();
		Conditions.await("the late acquire given back", Duration.ofSeconds(10), () -> present(redisKeys).isEmpty());
		assertThat(present(redisKeys)).isEmpty();
	}

	/**
	 * The first call after start does not wait for the connection: with the server frozen
	 * before the provider's handshake, the answer is pending when the call returns, and
	 * fails at the store timeout saying the connection did not come. The acquire is not
	 * sent once the connection comes late, and the next call goes through.
	 */
	@Test
	void theFirstCallDoesNotWaitForTheConnection() {
		start(false);
		String key = "async-connect-" + UUID.randomUUID();
		CompletableFuture<LockAttempt> answer = this.provider.tryLock(LockRequest.exclusive(key, LEASE))
			.toCompletableFuture();
		assertThat(answer).as("the answer when tryLock returns, no connection yet").isNotDone();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(() -> LockAttempt.join(answer))
			.withMessage("Redis did not answer within " + STORE_TIMEOUT.toMillis()
					+ "ms (distributed-lock.store-timeout) to connect to acquire lock '" + key + "'");
		this.redis.resume();
		TestRedis.awaitAnswers(this.provider);
		assertThat(present(List.of(this.keys.lockKey(key)))).as("the lock taken after its caller gave up").isEmpty();
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

}
