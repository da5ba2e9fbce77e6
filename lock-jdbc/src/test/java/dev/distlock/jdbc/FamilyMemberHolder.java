package dev.distlock.jdbc;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import dev.distlock.DistributedLatch;
import dev.distlock.Lease;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.MultiLease;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.harness.fuzz.FencedRegister;
import dev.distlock.harness.fuzz.LockHolder;
import dev.distlock.harness.fuzz.Templates;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;

/**
 * A holder JVM of one member of the lock family, to be stopped ({@code SIGSTOP}) or
 * killed ({@code kill -9}): takes the {@link Member} of {@link #MEMBER} on
 * {@link LockHolder#KEY} with auto-renew on and prints {@code HELD <token>} (for a latch:
 * counts participant {@link #PARTICIPANT} down on a latch of 2 and prints
 * {@code COUNTED <missing>}). With {@link #WRITES}, it then writes to the fenced register
 * with its token every few milliseconds without asking whether it still holds the lease,
 * as a holder whose pause fell between its check and its write; once the loss is reported
 * it prints {@code LOST <System.nanoTime()>}, writes five more times, prints
 * {@code DONE <accepted after the loss> <rejected>} and releases, printing
 * {@code RELEASE <exception>} if the release throws. Without it, it holds until killed or
 * its standard input ends.
 */
public final class FamilyMemberHolder {

	/** Setting: the {@link Member} to hold. */
	static final String MEMBER = "holder.member";

	/** Setting: whether to write to the fenced register (the paused holder). */
	static final String WRITES = "holder.writes";

	/** The participant a latch holder counts down. */
	static final String PARTICIPANT = "killed-participant";

	/** The members a holder JVM can hold. */
	enum Member {

		/** A read hold of a read-write lock. */
		READ,

		/** The write side of a read-write lock. */
		WRITE,

		/** One permit of a semaphore of one permit. */
		PERMIT,

		/** A multi-key lock on the key and {@link #secondKey(String)}. */
		MULTI,

		/** A participant of a countdown latch of two. */
		LATCH;

		/** The options of this member's hold. */
		LockOptions options(Duration wait, Duration lease) {
			LockOptions.Builder builder = LockOptions.builder()
				.waitTime(wait)
				.leaseTime(lease)
				.autoRenew(true)
				.retryInterval(Duration.ofMillis(20));
			if (this == READ) {
				builder.mode(LockMode.READ);
			}
			else if (this == PERMIT) {
				builder.permits(1);
			}
			return builder.build();
		}

		/** Takes this member on {@code key}. */
		Lease hold(DefaultLockTemplate template, String key, LockOptions options) {
			return (this == MULTI) ? template.acquireAll(List.of(key, secondKey(key)), options)
					: template.acquire(key, options);
		}

		/** The token a fenced write of {@code lease} carries: the first key's. */
		static long token(Lease lease, String key) {
			return (lease instanceof MultiLease multi) ? multi.fencingToken(key) : lease.fencingToken();
		}

		/** The other key of a multi-key lock on {@code key}. */
		static String secondKey(String key) {
			return key + "-second";
		}

	}

	private FamilyMemberHolder() {
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		String key = WorkerArgs.require(settings, LockHolder.KEY);
		Member member = Member.valueOf(WorkerArgs.require(settings, MEMBER));
		Duration leaseTime = Duration.ofMillis(WorkerArgs.number(settings, LockHolder.LEASE_MILLIS));
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		RenewalScheduler scheduler = new RenewalScheduler();
		AtomicLong lostAt = new AtomicLong();
		LockOptions options = member.options(Duration.ofSeconds(5), leaseTime);
		DefaultLockTemplate template = new DefaultLockTemplate(Templates.answering(store, settings), scheduler, options,
				(lease, reason, holder) -> {
					lostAt.set(System.nanoTime());
					System.out.println("LOST " + lostAt.get() + " " + reason);
				}, true, LockObserver.NONE, HandoverSettings.DEFAULTS);
		if (member == Member.LATCH) {
			DistributedLatch latch = template.latch(key, 2, Duration.ofMinutes(5));
			latch.countDown(PARTICIPANT);
			System.out.println("COUNTED " + latch.getCount());
			holdUntilKilled();
			return;
		}
		Lease lease = member.hold(template, key, options);
		long token = Member.token(lease, key);
		System.out.println("HELD " + token);
		System.out.flush();
		if (!Boolean.parseBoolean(settings.get(WRITES))) {
			holdUntilKilled();
			return;
		}
		try (FencedRegister register = WorkerArgs.instance(settings, WorkerArgs.RESOURCES, ResourceFactory.class)
			.fencedRegister(settings)) {
			writeUntilToldOfTheLoss(register, token, lostAt);
		}
		try {
			lease.release();
		}
		catch (RuntimeException ex) {
			System.out.println("RELEASE " + ex.getClass().getSimpleName());
		}
		System.out.flush();
		template.close();
		scheduler.close();
		store.close();
		System.exit(0);
	}

	private static void writeUntilToldOfTheLoss(FencedRegister register, long token, AtomicLong lostAt)
			throws InterruptedException {
		int acceptedAfterLoss = 0;
		int rejected = 0;
		int writesAfterLoss = 0;
		while (writesAfterLoss < 5) {
			boolean lost = lostAt.get() != 0;
			boolean accepted = register.write(token, "first holder");
			rejected += accepted ? 0 : 1;
			if (lost) {
				writesAfterLoss++;
				acceptedAfterLoss += accepted ? 1 : 0;
			}
			TimeUnit.MILLISECONDS.sleep(5);
		}
		System.out.println("DONE " + acceptedAfterLoss + " " + rejected);
		System.out.flush();
	}

	private static void holdUntilKilled() throws java.io.IOException {
		System.out.flush();
		while (System.in.read() != -1) {
			// hold until killed
		}
		System.exit(0);
	}

}
