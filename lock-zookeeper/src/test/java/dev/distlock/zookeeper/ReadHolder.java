package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.Map;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;
import dev.distlock.testsupport.ProviderFactory;
import dev.distlock.testsupport.WorkerArgs;
import dev.distlock.testsupport.fuzz.LockHolder;
import dev.distlock.testsupport.fuzz.Templates;

/**
 * A reader JVM, to be killed: takes the read side of a key with auto-renew on, prints
 * {@code HELD <token>}, and keeps holding it until killed or its standard input ends. Its
 * settings are {@link LockHolder}'s ({@link LockHolder#settings}).
 */
public final class ReadHolder {

	private ReadHolder() {
	}

	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		String key = WorkerArgs.require(settings, LockHolder.KEY);
		Duration leaseTime = Duration.ofMillis(WorkerArgs.number(settings, LockHolder.LEASE_MILLIS));
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = Templates.of(Templates.answering(store, settings), scheduler);
		Lease lease = template.acquire(key,
				LockOptions.builder()
					.mode(LockMode.READ)
					.waitTime(Duration.ofSeconds(5))
					.leaseTime(leaseTime)
					.autoRenew(true)
					.build());
		System.out.println("HELD " + lease.fencingToken());
		System.out.flush();
		while (System.in.read() != -1) {
			// hold until killed
		}
		lease.release();
		scheduler.close();
		store.close();
	}

}
