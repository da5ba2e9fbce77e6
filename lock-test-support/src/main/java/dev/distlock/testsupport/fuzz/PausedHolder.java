package dev.distlock.fuzz;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The holder JVM of {@link HolderPausedTests}: takes a lock with auto-renew on, prints
 * {@code HELD <token>}, then writes to the {@link FencedRegister} with its token every
 * few milliseconds without ever asking whether it still holds the lock: the worst case of
 * a holder whose pause fell between its check and its write. When the loss is reported it
 * prints {@code LOST <System.nanoTime()>} (the monotonic clock, which on Linux is shared
 * by every process of the host), writes a few more times, and prints
 * {@code DONE <accepted after the loss> <rejected>}.
 * <p>
 * Arguments: Redis port, lock key, lease time in milliseconds.
 */
public final class PausedHolder {

	private PausedHolder() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]);
		String key = args[1];
		Duration leaseTime = Duration.ofMillis(Long.parseLong(args[2]));
		LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(port);
		RenewalScheduler scheduler = new RenewalScheduler();
		AtomicLong lostAt = new AtomicLong();
		LockOptions options = LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(leaseTime)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(20))
			.build();
		DefaultLockTemplate template = new DefaultLockTemplate(
				new RedisLockProvider(connectionFactory, TestRedis.PREFIX, false), scheduler, options,
				(lease, reason, holder) -> {
					lostAt.set(System.nanoTime());
					System.out.println("LOST " + lostAt.get() + " " + reason);
				}, true);
		FencedRegister register = new FencedRegister(new StringRedisTemplate(connectionFactory));
		Lease lease = template.acquire(key, options);
		System.out.println("HELD " + lease.fencingToken());
		int acceptedAfterLoss = 0;
		int rejected = 0;
		int writesAfterLoss = 0;
		while (writesAfterLoss < 5) {
			boolean lost = lostAt.get() != 0;
			boolean accepted = register.write(lease.fencingToken(), "first holder");
			if (!accepted) {
				rejected++;
			}
			if (lost) {
				writesAfterLoss++;
				acceptedAfterLoss += accepted ? 1 : 0;
			}
			TimeUnit.MILLISECONDS.sleep(5);
		}
		System.out.println("DONE " + acceptedAfterLoss + " " + rejected);
		System.out.flush();
		try {
			lease.release();
		}
		catch (RuntimeException ex) {
			System.out.println("RELEASE " + ex.getClass().getSimpleName());
		}
		scheduler.close();
		connectionFactory.destroy();
		System.exit(0);
	}

}
