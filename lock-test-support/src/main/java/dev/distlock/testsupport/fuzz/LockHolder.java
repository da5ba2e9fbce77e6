package dev.distlock.fuzz;

import java.time.Duration;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * The holder JVM of {@link HolderKilledTests}: takes a lock with auto-renew on, prints
 * {@code HELD <token>}, and keeps holding it until killed (or its standard input ends).
 * <p>
 * Arguments: Redis port, lock key, lease time in milliseconds.
 */
public final class LockHolder {

	private LockHolder() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]);
		String key = args[1];
		Duration leaseTime = Duration.ofMillis(Long.parseLong(args[2]));
		LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(port);
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = TestRedis.template(connectionFactory, scheduler);
		Lease lease = template.acquire(key,
				LockOptions.builder().waitTime(Duration.ofSeconds(5)).leaseTime(leaseTime).autoRenew(true).build());
		System.out.println("HELD " + lease.fencingToken());
		System.out.flush();
		while (System.in.read() != -1) {
			// hold until killed
		}
		lease.release();
		scheduler.close();
		connectionFactory.destroy();
	}

}
