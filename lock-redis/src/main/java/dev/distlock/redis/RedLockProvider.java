package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.LongPredicate;

import dev.distlock.LockBackendException;
import dev.distlock.spi.CallThreads;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import io.lettuce.core.RedisURI;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * RedLock: one lock over N independent Redis masters (no replication between them, no
 * cluster), taken when a majority of them ({@code N/2+1}) granted it within its validity
 * time. Opt-in; see {@code docs/redlock.md} for what it does and does not guarantee.
 *
 * <ul>
 * <li><b>Acquire</b> sends the acquire script to every master at once and returns as soon
 * as a quorum granted it or can no longer grant it, so a slow or paused minority costs
 * nothing. The lock counts only if the quorum was reached within its validity: the lease
 * less the time the acquire took, less a margin for clock drift between the masters and
 * this JVM (1% of the lease plus 2 ms, {@link LockHandle#validityNanos}). Otherwise it is
 * released on every master, including those whose reply is still on the wire (the release
 * is queued behind the acquire on each master's connection).</li>
 * <li><b>Fencing tokens.</b> Each master keeps a counter raised to its clock in
 * microseconds. The token is the largest of the quorum's counters, and before it is
 * handed out it is written back to the counter of a quorum of masters while the lock is
 * still held there. Any two acquisitions' quorums share a master; on it the later one
 * took the lock only after the earlier one's lock, and so its counter raise, was gone:
 * its token is larger. This holds whatever the masters' clocks say, as long as no master
 * loses its data (a restart without persistence, a failover to a replica): a master that
 * did falls back to its clock, so tokens still rise only if its clock is ahead of the
 * tokens already handed out.</li>
 * <li><b>Renewal</b> extends the lease on every master and succeeds when a quorum
 * confirmed it within the validity; when a quorum says the lock is no longer this owner's
 * it reports the lease lost, and when too few masters answer it fails, so that the lease
 * is declared lost at its deadline. Loss is never silent.</li>
 * <li><b>Release</b> deletes the lock on every master (owner-checked) and succeeds when a
 * quorum deleted it. A master that had not answered the acquire yet (down, or its client
 * reconnecting) may still run it later, so it is sent the release again once it
 * answers.</li>
 * <li>A majority of masters down or unreachable makes every call fail with
 * {@link LockBackendException} naming them; a minority down or paused changes
 * nothing.</li>
 * </ul>
 *
 * <p>
 * Two contenders can split the masters between them so that neither has a quorum; each
 * then releases what it took and sees the lock busy, and retries as any waiter does.
 * Attempts of one provider reach every master in the same order, so contenders of one JVM
 * never split the vote among themselves.
 */
public final class RedLockProvider implements LockProvider, AutoCloseable {

	private final List<RedLockMaster> masters;

	private final List<LettuceConnectionFactory> ownedFactories;

	private final String keyPrefix;

	private final Duration storeTimeout;

	private final int quorum;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private final ReentrantLock sendOrder = new ReentrantLock();

	/**
	 * Acquires wait for a quorum's replies: those of waits that hold no thread run here.
	 */
	private final CallThreads callThreads = new CallThreads("distlock-redlock-call-", 16);

	/**
	 * Locks over the masters behind {@code connectionFactories} (Lettuce's, one per
	 * independent master; the caller starts and destroys them).
	 * @param keyPrefix prepended to every key on every master; not empty
	 * @param storeTimeout the longest any one call (acquire, renew, release) may take
	 */
	public RedLockProvider(List<? extends RedisConnectionFactory> connectionFactories, String keyPrefix,
			Duration storeTimeout) {
		this(connectionFactories, List.of(), keyPrefix, storeTimeout);
	}

	private RedLockProvider(List<? extends RedisConnectionFactory> connectionFactories,
			List<LettuceConnectionFactory> ownedFactories, String keyPrefix, Duration storeTimeout) {
		if (connectionFactories.size() < 3) {
			throw new IllegalArgumentException(
					"RedLock needs at least 3 independent Redis masters, but was given " + connectionFactories.size());
		}
		if (keyPrefix.isEmpty()) {
			throw new IllegalArgumentException("The RedLock key prefix must not be empty");
		}
		if (storeTimeout.isNegative() || storeTimeout.isZero()) {
			throw new IllegalArgumentException("storeTimeout must be positive but was " + storeTimeout);
		}
		this.keyPrefix = keyPrefix;
		this.storeTimeout = storeTimeout;
		this.quorum = quorum(connectionFactories.size());
		this.ownedFactories = ownedFactories;
		List<RedLockMaster> list = new ArrayList<>();
		for (int i = 0; i < connectionFactories.size(); i++) {
			RedisConnectionFactory factory = connectionFactories.get(i);
			list.add(new RedLockMaster(name(factory, i), factory, storeTimeout));
		}
		this.masters = List.copyOf(list);
	}

	/**
	 * Locks over the masters at {@code uris}
	 * ({@code redis://[user:password@]host:port[/db]}, {@code rediss://} for TLS), each
	 * with a Lettuce connection of its own that this provider opens now and closes on
	 * {@link #close()}.
	 * @throws IllegalArgumentException for fewer than 3 masters, a URI that is not a
	 * single Redis server, or the same server named twice
	 */
	public static RedLockProvider connect(List<String> uris, String keyPrefix, Duration storeTimeout) {
		List<RedisURI> parsed = parse(uris);
		List<LettuceConnectionFactory> factories = new ArrayList<>();
		for (RedisURI uri : parsed) {
			LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder();
			if (uri.isSsl()) {
				client.useSsl();
			}
			LettuceConnectionFactory factory = new LettuceConnectionFactory(
					LettuceConnectionFactory.createRedisConfiguration(uri), client.build());
			factory.afterPropertiesSet();
			factory.start();
			factories.add(factory);
		}
		return new RedLockProvider(factories, factories, keyPrefix, storeTimeout);
	}

	/**
	 * Parses and checks the masters' URIs: at least 3, each a single server, none twice.
	 * @throws IllegalArgumentException naming what is wrong
	 */
	public static List<RedisURI> parse(List<String> uris) {
		if (uris.size() < 3) {
			throw new IllegalArgumentException("RedLock needs at least 3 independent Redis masters (a majority of them"
					+ " must survive any failure), but " + uris.size() + " " + ((uris.size() == 1) ? "was" : "were")
					+ " given: " + uris);
		}
		List<RedisURI> parsed = new ArrayList<>();
		List<String> seen = new ArrayList<>();
		for (String text : uris) {
			RedisURI uri;
			try {
				uri = RedisURI.create(text.trim());
			}
			catch (RuntimeException ex) {
				throw new IllegalArgumentException(
						"'" + text + "' is not a Redis URI (redis://host:port): " + ex.getMessage(), ex);
			}
			if (uri.getHost() == null || !uri.getSentinels().isEmpty() || uri.getSocket() != null) {
				throw new IllegalArgumentException(
						"'" + text + "' is not a single Redis server (redis://host:port or rediss://host:port)");
			}
			String identity = uri.getHost().toLowerCase(java.util.Locale.ROOT) + ":" + uri.getPort();
			if (seen.contains(identity)) {
				throw new IllegalArgumentException("The Redis master " + identity + " is named twice (" + uris
						+ "): RedLock's masters must be independent servers, or one failure counts twice");
			}
			seen.add(identity);
			parsed.add(uri);
		}
		return parsed;
	}

	/** A majority: the smallest number of masters that any two such sets share one of. */
	static int quorum(int masters) {
		return masters / 2 + 1;
	}

	private static String name(RedisConnectionFactory factory, int index) {
		if (factory instanceof LettuceConnectionFactory lettuce) {
			return lettuce.getHostName() + ":" + lettuce.getPort();
		}
		return "master-" + index;
	}

	/** How many masters must agree: {@code N/2+1}. */
	public int quorum() {
		return this.quorum;
	}

	/** How many masters this provider locks on. */
	public int masters() {
		return this.masters.size();
	}

	@Override
	public Duration callTimeout() {
		return this.storeTimeout;
	}

	@Override
	public Optional<Executor> callExecutor() {
		return Optional.of(this.callThreads);
	}

	@Override
	public String storeName() {
		return "redlock";
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Plain locks only ({@link LockKind#EXCLUSIVE}); answers on the calling thread,
	 * within the store timeout.
	 */
	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> {
			if (request.kind() != LockKind.EXCLUSIVE) {
				throw Capabilities.unsupported(this, request.kind(), request.key());
			}
			return tryLock(request.key(), request.leaseTime());
		});
	}

	private LockAttempt tryLock(String key, Duration leaseTime) {
		String lockKey = this.keyPrefix + key;
		String owner = this.instanceId + ":" + this.sequence.incrementAndGet();
		String lease = millis(leaseTime);
		long start = System.nanoTime();
		long validity = LockHandle.validityNanos(leaseTime);
		long deadline = start + Math.min(this.storeTimeout.toNanos(), validity);
		RedLockReplies acquire = sendAcquire(key, lockKey, owner, lease, deadline);
		try {
			RedLockReplies.Tally taken = acquire.await(deadline);
			if (taken.reached()) {
				long token = Arrays.stream(taken.values())
					.filter((value) -> value != null && value > 0)
					.mapToLong(Long::longValue)
					.max()
					.orElseThrow();
				RedLockReplies.Tally fenced = fence(key, lockKey, owner, token, taken, deadline).await(deadline);
				long elapsed = System.nanoTime() - start;
				if (fenced.reached() && elapsed < validity) {
					return new LockAttempt.Acquired(new RedLockHandle(key, lockKey, owner, token, acquire));
				}
				releaseEverywhere(key, lockKey, owner, acquire);
				throw new LockBackendException(key,
						"RedLock could not take lock '" + key + "' within its validity (" + (validity / 1_000_000)
								+ "ms of its " + leaseTime.toMillis() + "ms lease, after " + (elapsed / 1_000_000)
								+ "ms): " + fenced.describe(),
						fenced.cause());
			}
			releaseEverywhere(key, lockKey, owner, acquire);
			if (taken.unreachable()) {
				throw new LockBackendException(key,
						"RedLock could not reach a quorum of masters to acquire lock '" + key + "' within "
								+ ((deadline - start) / 1_000_000) + "ms (the lease's validity or"
								+ " distributed-lock.store-timeout, whichever is shorter): " + taken.describe(),
						taken.cause());
			}
			return new LockAttempt.Busy(remainingHint(taken, this.quorum));
		}
		catch (InterruptedException ex) {
			releaseEverywhere(key, lockKey, owner, acquire);
			Thread.currentThread().interrupt();
			throw new LockBackendException(key, "Interrupted while acquiring lock '" + key + "' on the RedLock masters",
					ex);
		}
	}

	private RedLockReplies sendAcquire(String key, String lockKey, String owner, String lease, long deadline) {
		this.sendOrder.lock();
		try {
			// The same order on every master: contenders of this JVM never split the
			// vote.
			return send((value) -> value > 0, (master) -> master.send(key, "acquire", RedLockScripts.ACQUIRE, deadline,
					keys(lockKey), owner, lease));
		}
		finally {
			this.sendOrder.unlock();
		}
	}

	/**
	 * Writes the token back to every master of the quorum whose own counter was below it
	 * (a master whose counter gave the token already has it).
	 */
	private RedLockReplies fence(String key, String lockKey, String owner, long token, RedLockReplies.Tally taken,
			long deadline) {
		@Nullable Long[] values = taken.values();
		String tokenText = Long.toString(token);
		List<CompletableFuture<Long>> replies = new ArrayList<>();
		for (int i = 0; i < this.masters.size(); i++) {
			Long value = values[i];
			if (value == null || value <= 0) {
				replies.add(CompletableFuture.completedFuture(0L));
			}
			else if (value == token) {
				replies.add(CompletableFuture.completedFuture(1L));
			}
			else {
				replies.add(this.masters.get(i)
					.send(key, "fence", RedLockScripts.FENCE, deadline, keys(lockKey), owner, tokenText));
			}
		}
		return new RedLockReplies(this.masters, replies, this.quorum, (value) -> value == 1);
	}

	/**
	 * When a quorum of masters could be free, as far as the answers tell: the masters
	 * that granted this attempt are free now, and each busy one is free when its lease
	 * runs out, so the hint is the remaining lease of the busy master that would complete
	 * a quorum. The holder's quorum all have its lease; a stale key on a minority,
	 * however long, does not stretch the hint. The acquire stops counting once a quorum
	 * can no longer grant it, so some masters may not have answered: they count as free,
	 * which at worst makes a waiter look again sooner.
	 */
	static Duration remainingHint(RedLockReplies.Tally taken, int quorum) {
		@Nullable Long[] values = taken.values();
		long free = Arrays.stream(values).filter((value) -> value == null || value > 0).count();
		long[] busy = Arrays.stream(values)
			.filter((value) -> value != null && value < 0)
			.mapToLong((value) -> -value - 1)
			.sorted()
			.toArray();
		if (busy.length == 0) {
			return Duration.ZERO;
		}
		int needed = (int) Math.max(1, quorum - free);
		return Duration.ofMillis(busy[Math.min(needed, busy.length) - 1]);
	}

	/**
	 * Deletes this owner's lock on every master, without waiting: queued behind the
	 * acquire on each master's connection, so it also undoes an acquire whose reply is
	 * late or lost.
	 */
	private void releaseEverywhere(String key, String lockKey, String owner) {
		long deadline = System.nanoTime() + this.storeTimeout.toNanos();
		for (RedLockMaster master : this.masters) {
			master.send(key, "clean up", RedLockScripts.RELEASE, deadline, keys(lockKey), owner);
		}
	}

	/**
	 * As {@link #releaseEverywhere(String, String, String)} after a failed acquire, and
	 * again on each master that had not answered the acquire yet, once it has: a delete
	 * queued behind the acquire can still run first, when the acquire's script was not
	 * cached there and is sent again whole after {@code NOSCRIPT}.
	 */
	private void releaseEverywhere(String key, String lockKey, String owner, RedLockReplies acquire) {
		boolean[] answered = acquire.answeredNow();
		releaseEverywhere(key, lockKey, owner);
		releaseAfterLateAnswers(key, lockKey, owner, acquire, answered);
	}

	/**
	 * Deletes this owner's lock again on each master that had not answered
	 * {@code acquire} when {@code answered} was read, once it has (or failed).
	 */
	private void releaseAfterLateAnswers(String key, String lockKey, String owner, RedLockReplies acquire,
			boolean[] answered) {
		acquire.afterEachAnswer(answered,
				(index) -> this.masters.get(index)
					.send(key, "clean up", RedLockScripts.RELEASE, System.nanoTime() + this.storeTimeout.toNanos(),
							keys(lockKey), owner));
	}

	private RedLockReplies send(LongPredicate yes, Function<RedLockMaster, CompletableFuture<Long>> call) {
		List<CompletableFuture<Long>> replies = new ArrayList<>();
		for (RedLockMaster master : this.masters) {
			replies.add(call.apply(master));
		}
		return new RedLockReplies(this.masters, replies, this.quorum, yes);
	}

	private String[] keys(String lockKey) {
		return new String[] { lockKey, this.keyPrefix };
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

	/** Closes every master's connection (and the connection factories it made). */
	@Override
	public void close() {
		this.masters.forEach(RedLockMaster::close);
		this.ownedFactories.forEach(LettuceConnectionFactory::destroy);
		this.callThreads.close();
	}

	@Override
	public String toString() {
		return "RedLockProvider" + this.masters;
	}

	/** One acquisition on a quorum of masters. */
	final class RedLockHandle implements LockHandle {

		private final String key;

		private final String lockKey;

		private final String owner;

		private final long fencingToken;

		/** The acquire's replies: a master that has not answered may still run it. */
		private final RedLockReplies acquire;

		RedLockHandle(String key, String lockKey, String owner, long fencingToken, RedLockReplies acquire) {
			this.key = key;
			this.lockKey = lockKey;
			this.owner = owner;
			this.fencingToken = fencingToken;
			this.acquire = acquire;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public long fencingToken() {
			return this.fencingToken;
		}

		/**
		 * True when a quorum extended the lease within its validity; false when a quorum
		 * says the lock is not this owner's any more; otherwise (too few answers, or too
		 * late) {@link LockBackendException}, so that the lease is lost at its deadline
		 * unless a later renewal succeeds.
		 */
		@Override
		public boolean renew(Duration leaseTime) {
			long start = System.nanoTime();
			long validity = LockHandle.validityNanos(leaseTime);
			long deadline = start + Math.min(RedLockProvider.this.storeTimeout.toNanos(), validity);
			String lease = millis(leaseTime);
			RedLockReplies.Tally renewed = await("renew", deadline, send((value) -> value == 1, (master) -> master
				.send(this.key, "renew", RedLockScripts.RENEW, deadline, keys(this.lockKey), this.owner, lease)));
			if (renewed.reached() && System.nanoTime() - start < validity) {
				return true;
			}
			if (renewed.refused()) {
				// Lost on a quorum, perhaps still ours on a minority, which this renewal
				// just extended: deleted there, so the stale keys cannot outlive the
				// lease
				// they had.
				releaseEverywhere(this.key, this.lockKey, this.owner);
				return false;
			}
			throw new LockBackendException(this.key,
					"RedLock could not renew lock '" + this.key + "' on a quorum of masters within the validity of its "
							+ leaseTime.toMillis() + "ms lease: " + renewed.describe(),
					renewed.cause());
		}

		/**
		 * True when a quorum deleted the lock; false when a quorum says it was not this
		 * owner's (expired, taken over, or released before); otherwise
		 * {@link LockBackendException}. The masters that did not answer delete it when
		 * the command reaches them, or let it expire. A master that had not answered the
		 * acquire yet is sent the release again once it has, as after a failed acquire:
		 * the acquire can still run there after the release.
		 */
		@Override
		public boolean release() {
			long deadline = System.nanoTime() + RedLockProvider.this.storeTimeout.toNanos();
			boolean[] answered = this.acquire.answeredNow();
			RedLockReplies replies = send((value) -> value == 1, (master) -> master.send(this.key, "release",
					RedLockScripts.RELEASE, deadline, keys(this.lockKey), this.owner));
			releaseAfterLateAnswers(this.key, this.lockKey, this.owner, this.acquire, answered);
			RedLockReplies.Tally released = await("release", deadline, replies);
			if (released.reached()) {
				return true;
			}
			if (released.refused()) {
				return false;
			}
			throw new LockBackendException(this.key,
					"RedLock could not release lock '" + this.key + "' on a quorum of masters: " + released.describe(),
					released.cause());
		}

		private RedLockReplies.Tally await(String operation, long deadline, RedLockReplies replies) {
			try {
				return replies.await(deadline);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new LockBackendException(this.key, "Interrupted while waiting for the RedLock masters to "
						+ operation + " lock '" + this.key + "'", ex);
			}
		}

		@Override
		public String toString() {
			return "RedLockHandle[" + this.lockKey + ", owner=" + this.owner + ", token=" + this.fencingToken + "]";
		}

	}

}
