package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

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
 * killed ({@code kill -9}): takes a read lock, a write lock, the one permit of a
 * semaphore or a multi-key lock (see {@link Member}) with auto-renew on, prints
 * {@code HELD <token>} (for a multi-key lock, the token of the key that
 * {@link Member#contended} names), then writes to the {@link FencedRegister} with that
 * token every few milliseconds without ever asking whether it still holds: the worst case
 * of a holder whose pause fell between its check and its write. When the loss is reported
 * to its listener it prints {@code LOST <System.nanoTime()> <reason>}, writes a few more
 * times, prints {@code DONE <accepted after the loss> <rejected>}, releases and prints
 * {@code RELEASE ok} or {@code RELEASE <exception>}.
 * <p>
 * Arguments are {@code key=value}: {@code provider}, {@code resources},
 * {@link LockHolder#KEY}, {@link LockHolder#LEASE_MILLIS} (also the session timeout),
 * {@link #MEMBER}, and the store's and resource's settings.
 */
public final class FamilyHolderJvm {

	/** Setting: the {@link Member} to hold. */
	static final String MEMBER = "family.member";

	/** What the holder holds, and what a contender takes against it. */
	enum Member {

		/** The read side of a read-write lock; the contender writes. */
		READ,

		/** The write side of a read-write lock; the contender writes too. */
		WRITE,

		/** The one permit of a semaphore of one; the contender wants it too. */
		PERMIT,

		/**
		 * A multi-key lock on {@code key:a} and {@code key:b}; the contender locks
		 * {@code key:b} and {@code key:c}.
		 */
		MULTI;

		/** The key whose token is fenced: the one both sides want. */
		String contended(String key) {
			return (this == MULTI) ? key + ":b" : key;
		}

		/** The holder's lock, with {@code options} (a new builder). */
		Lease acquire(DefaultLockTemplate template, String key, LockOptions.Builder options) {
			return switch (this) {
				case READ -> template.acquire(key, options.mode(LockMode.READ).build());
				case WRITE -> template.acquire(key, options.build());
				case PERMIT -> template.acquire(key, options.permits(1).build());
				case MULTI -> template.acquireAll(List.of(key + ":a", key + ":b"), options.build());
			};
		}

		/**
		 * The lock a contender takes against the holder's, with {@code options} (a new
		 * builder); empty if it did not get it within the options' wait.
		 */
		Optional<? extends Lease> contend(DefaultLockTemplate template, String key, LockOptions.Builder options) {
			return switch (this) {
				case READ, WRITE -> template.tryAcquire(key, options.build());
				case PERMIT -> template.tryAcquire(key, options.permits(1).build());
				case MULTI -> template.tryAcquireAll(List.of(key + ":b", key + ":c"), options.build());
			};
		}

		/** The token of the contended key. */
		long token(Lease lease, String key) {
			return (lease instanceof MultiLease all) ? all.fencingToken(contended(key)) : lease.fencingToken();
		}

	}

	private FamilyHolderJvm() {
	}

	/**
	 * The holder's options, and a contender's: a wait of up to 5 s, the lease, renewed,
	 * retries every 20 ms.
	 */
	static LockOptions.Builder options(Duration leaseTime) {
		return LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(leaseTime)
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(20));
	}

	/** Runs the JVM's part; see the class comment. */
	public static void main(String[] args) throws Exception {
		Map<String, String> settings = WorkerArgs.parse(args);
		String key = WorkerArgs.require(settings, LockHolder.KEY);
		Member member = Member.valueOf(WorkerArgs.require(settings, MEMBER));
		Duration leaseTime = Duration.ofMillis(WorkerArgs.number(settings, LockHolder.LEASE_MILLIS));
		LockOptions options = options(leaseTime).build();
		ProviderFactory store = WorkerArgs.instance(settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		RenewalScheduler scheduler = new RenewalScheduler();
		AtomicLong lostAt = new AtomicLong();
		DefaultLockTemplate template = new DefaultLockTemplate(Templates.answering(store, settings), scheduler, options,
				(lease, reason, holder) -> {
					lostAt.compareAndSet(0, System.nanoTime());
					System.out.println("LOST " + System.nanoTime() + " " + reason);
				}, true, LockObserver.NONE, HandoverSettings.DEFAULTS);
		try (FencedRegister register = WorkerArgs.instance(settings, WorkerArgs.RESOURCES, ResourceFactory.class)
			.fencedRegister(settings)) {
			Lease lease = member.acquire(template, key, options(leaseTime));
			long token = member.token(lease, key);
			System.out.println("HELD " + token);
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
			try {
				lease.release();
				System.out.println("RELEASE ok");
			}
			catch (RuntimeException ex) {
				System.out.println("RELEASE " + ex.getClass().getSimpleName());
			}
		}
		finally {
			System.out.flush();
			template.close();
			scheduler.close();
			store.close();
		}
		System.exit(0);
	}

}
