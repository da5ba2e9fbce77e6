package dev.distlock.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LockBackendException;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A release that fails while Redis is down ({@code kill -9}, with an fsync'ed append-only
 * file so the lock survives the restart) is tried again once Redis is back, so the lock
 * is free for another JVM soon after, not a lease later.
 *
 * <p>
 * Lettuce itself sends a command again after it reconnects, as long as its own command
 * timeout has not run out, and that alone would free the lock here after a short outage.
 * The holder's client has a command timeout of one second, shorter than the outage, so
 * its release is given up for good, as Boot's default of 60 s gives one up in an outage
 * that long: then only distlock's retry frees the lock before its lease ends.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("server")
class RedisPendingReleaseTests {

	private static final Duration LEASE = Duration.ofMinutes(1);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private RedisServer server;

	@AfterEach
	void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
		this.server.close();
	}

	private DefaultLockTemplate template(LettuceConnectionFactory connections) {
		RedisLockProvider provider = new RedisLockProvider(connections, TestRedis.PREFIX, false);
		TestRedis.awaitAnswers(provider);
		RenewalScheduler scheduler = new RenewalScheduler();
		this.closeables.add(scheduler);
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(20))
					.leaseTime(LEASE)
					.autoRenew(true)
					.retryInterval(Duration.ofMillis(100))
					.build());
		this.closeables.add(template);
		return template;
	}

	private LettuceConnectionFactory connections(Duration commandTimeout) {
		LettuceConnectionFactory connections = TestRedis.connectionFactory(this.server, commandTimeout);
		this.closeables.add(connections::destroy);
		return connections;
	}

	@Test
	void aLockWhoseReleaseFailedWhileRedisWasDownIsFreeSoonAfterRedisIsBack() {
		this.server = RedisServer.start("--appendonly", "yes", "--appendfsync", "always");
		DefaultLockTemplate jvm = template(connections(Duration.ofSeconds(1)));
		DefaultLockTemplate other = template(connections(Duration.ofSeconds(10)));
		String key = "pending-" + UUID.randomUUID();
		Lease lease = jvm.acquire(key, LockOptions.defaults());
		this.server.kill();
		assertThatExceptionOfType(LockBackendException.class).isThrownBy(lease::release);
		assertThat(jvm.pendingReleases()).isOne();
		this.server = this.server.restart();
		long back = System.nanoTime();
		try (Lease next = other.acquire(key, LockOptions.defaults())) {
			assertThat(next.fencingToken()).isGreaterThan(lease.fencingToken());
			// Lettuce's reconnect, then at most one pause between retries.
			assertThat(Duration.ofNanos(System.nanoTime() - back)).as("the lock free again after Redis is back")
				.isLessThan(Duration.ofSeconds(5));
		}
		// The retry hears of its success just after Redis released the lock.
		Conditions.await("the retry done", Duration.ofSeconds(10), () -> jvm.pendingReleases() == 0);
	}

}
