package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.Map;

import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

/**
 * A holder JVM for any store, to be killed: takes a lock with auto-renew on, prints
 * {@code HELD <token>}, and keeps holding it until killed ({@code kill -9} through
 * {@link dev.distlock.harness.ChildJvm#kill()}) or its standard input ends.
 * <p>
 * Arguments are {@code key=value} ({@link WorkerArgs}): {@code provider}, {@link #KEY},
 * {@link #LEASE_MILLIS}, optionally {@link #MODE}, and the store's own settings.
 */
public final class LockHolder {

	/** Setting: the lock's key. */
	public static final String KEY = "holder.key";

	/** Setting: the lease time in milliseconds. */
	public static final String LEASE_MILLIS = "holder.lease-millis";

	/**
	 * Setting, optional: the {@link LockMode} to hold (the plain lock, WRITE, if absent).
	 */
	public static final String MODE = "holder.mode";

	private LockHolder() {
	}

	/**
	 * The command line of a holder JVM ({@link LockHolder} or {@link PausedHolder}) on
	 * {@code store}, holding {@code key} with {@code lease}.
	 */
	public static Map<String, String> settings(StoreFixture store, String key, Duration lease) {
		Map<String, String> settings = store.childSettings();
		settings.put(KEY, key);
		settings.put(LEASE_MILLIS, String.valueOf(lease.toMillis()));
		return settings;
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		String key = WorkerArgs.require(settings, KEY);
		Duration leaseTime = Duration.ofMillis(WorkerArgs.number(settings, LEASE_MILLIS));
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = Templates.of(Templates.answering(store, settings), scheduler);
		Lease lease = template.acquire(key,
				LockOptions.builder()
					.mode(LockMode.valueOf(settings.getOrDefault(MODE, LockMode.WRITE.name())))
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
