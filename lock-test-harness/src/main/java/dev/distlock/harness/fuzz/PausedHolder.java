package dev.distlock.harness.fuzz;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.Lease;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;

/**
 * A holder JVM for any store, to be stopped with {@code SIGSTOP}: takes a lock with
 * auto-renew on, prints {@code HELD <token>}, then writes to the {@link FencedRegister}
 * with its token every few milliseconds without ever asking whether it still holds the
 * lock: the worst case of a holder whose pause fell between its check and its write. When
 * the loss is reported it prints {@code LOST <System.nanoTime()>} (the monotonic clock,
 * which on Linux is shared by every process of the host), writes a few more times, and
 * prints {@code DONE <accepted after the loss> <rejected>}.
 * <p>
 * Arguments are {@code key=value} ({@link WorkerArgs}): {@code provider},
 * {@code resources}, {@link LockHolder#KEY}, {@link LockHolder#LEASE_MILLIS}, and the
 * store's and resource's own settings.
 */
public final class PausedHolder {

	private PausedHolder() {
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		PausedJvm jvm = new PausedJvm(args);
		AtomicLong lostAt = new AtomicLong();
		DefaultLockTemplate template = jvm.template((lease, reason, holder) -> {
			lostAt.set(System.nanoTime());
			System.out.println("LOST " + lostAt.get() + " " + reason);
		}, HandoverSettings.DEFAULTS);
		FencedRegister register = jvm.register;
		Lease lease = template.acquire(jvm.key, jvm.options);
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
		jvm.close();
		System.exit(0);
	}

}
