package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.BatchRenewal;
import dev.distlock.spi.CallThreads;
import dev.distlock.spi.Capabilities;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.LocalHandover;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.spi.TokenBlock;
import org.jspecify.annotations.Nullable;

/**
 * Locks as rows of one table (default {@code distributed_lock}) in PostgreSQL, MariaDB or
 * MySQL, over the application's {@link DataSource}.
 *
 * <p>
 * A row holds the key, its current owner, its fence and when its lease runs out, on the
 * database's clock (never the JVM's). Every acquisition gets a fresh owner
 * ({@code <instance uuid>:<sequence>}); every change of owner raises the fence to
 * {@code max(fence + 1, database clock in microseconds)}, and rows stay when released, so
 * a key's fencing tokens only rise, also across a sweep of idle rows. Renewal and release
 * check owner and fence: a handle whose lease ran out can neither renew nor free the next
 * owner's lock. Acquire, renew and release are one statement each on PostgreSQL and on
 * MariaDB/MySQL once a key has its row; held leases are renewed by one statement per
 * renewal tick ({@link BatchRenewal}), which locks its rows in key order, as a multi-key
 * acquisition does, so that the two never deadlock.
 *
 * <p>
 * With local hand-over ({@link LocalHandover}, {@code distributed-lock.handover.*}) the
 * acquire statement reserves a block of fencing tokens ({@code fence} moves to the
 * block's last token), and the JVM passes the lock among its own threads in memory, each
 * with the next token of the block; an acquisition by any other owner gets a token past
 * the whole block. A waiter of another JVM that finds the lock busy marks its row
 * ({@code waited}), and the release that ends the run reports the mark
 * ({@link TokenBlock#releasedToWaiters()}), so that this JVM's threads let it in. After a
 * hand-over the machinery asks whether the row still has the acquisition's owner and
 * fence ({@link TokenBlock#stillHeld()}, one {@code SELECT}), so that a row that lost its
 * owner behind the JVM's back (a failover that lost the last write, a restore, an
 * operator's {@code UPDATE}) is reported to the holders it was passed through and not
 * handed to a thread that asked after another JVM could have taken it.
 *
 * <p>
 * Each statement runs in autocommit on a connection borrowed for it alone, on the
 * caller's thread but never in the caller's transaction; every call returns or throws
 * {@link LockBackendException} within {@link #callTimeout()} whatever the pool's timeouts
 * (see {@link JdbcCalls}), its message naming the root cause (connection refused,
 * authentication failed). A statement whose connection broke is run again on another
 * connection: an acquire that may have taken the lock and still ends without a result is
 * undone by its owner in the background, and a release run again after its reply was lost
 * counts a row freed with its fence unchanged as its own release. On PostgreSQL waiters
 * are woken by {@code NOTIFY} on release; on MariaDB and MySQL they poll with jittered
 * backoff.
 *
 * <p>
 * Read-write locks ({@link LockKind#SHARED}; see {@link JdbcReadWriteLocks}) keep read
 * holds in {@code TABLE_reader} and waiting writers' intents in {@code TABLE_intent};
 * multi-key locks ({@link LockKind#MULTI}; see {@link JdbcMultiLocks}) write the plain
 * locks' rows of every key in one transaction, locking them in key order. Segmented locks
 * are plain and multi-key locks.
 *
 * <p>
 * Semaphores ({@link LockKind#PERMITS}) and countdown latches ({@link #latches()}) live
 * in tables of their own beside the lock table, created by the same DDL: a permit is a
 * row with its own owner and lease, taken in a transaction that locks its semaphore's row
 * (see {@link JdbcSemaphores}); a latch counts each participant once (see
 * {@link JdbcLatches}).
 *
 * <p>
 * Rows whose lease ran out more than {@linkplain Builder#sweepAfter a day} ago are
 * deleted by a background sweep, once an hour. A key swept and taken again starts its
 * fence at the database's clock, above every token issued before, as long as that clock
 * never steps back by more than the sweep age.
 *
 * <p>
 * This class is the store's entry point: it answers the SPI, names the kinds it supports
 * and owns the lifecycle, and leaves each primitive to a class of its own: plain locks,
 * their token blocks, renewals and release signals to {@link JdbcMutexes} (handles:
 * {@link JdbcLockHandle}), read-write locks to {@link JdbcReadWriteLocks}, multi-key
 * locks to {@link JdbcMultiLocks}, semaphores to {@link JdbcSemaphores}, latches to
 * {@link JdbcLatches}, the schema's checks and DDL to {@link JdbcSchema}, the sweep to
 * {@link JdbcSweep}, and every statement's bound and retries to {@link JdbcCalls}.
 */
public final class JdbcLockProvider
		implements ReleaseSignalling, BatchRenewal, BatchRelease, LocalHandover, AutoCloseable {

	/** The table when none is named. */
	public static final String DEFAULT_TABLE_NAME = "distributed_lock";

	/** The bound of one call when none is configured. */
	public static final Duration DEFAULT_STORE_TIMEOUT = Duration.ofSeconds(3);

	/** How long a row stays after its lease ran out, when not configured. */
	public static final Duration DEFAULT_SWEEP_AFTER = Duration.ofDays(1);

	/** The longest key: the table's {@code name} column is {@code VARCHAR(255)}. */
	public static final int MAX_KEY_LENGTH = 255;

	private static final Pattern TABLE_NAME = Pattern
		.compile("[A-Za-z_][A-Za-z0-9_]{0,62}(\\.[A-Za-z_][A-Za-z0-9_]{0,62})?");

	private static final Set<LockKind> KINDS = Set
		.copyOf(EnumSet.of(LockKind.EXCLUSIVE, LockKind.SHARED, LockKind.PERMITS, LockKind.MULTI));

	private final DataSource listenerDataSource;

	private final String tableName;

	private final Duration sweepAfter;

	private volatile @Nullable JdbcLockDialect dialect;

	private final JdbcCalls calls;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private final JdbcSemaphores semaphores;

	private final JdbcLatches latches;

	private final JdbcReadWriteLocks readWrite;

	private final JdbcMultiLocks multi;

	private final JdbcMutexes mutexes;

	private final JdbcSchema schema;

	private final JdbcSweep sweep;

	/** Statements of callers that hold no thread while they wait; no more than a pool. */
	private final CallThreads callThreads = new CallThreads("distlock-jdbc-call-", 16);

	/**
	 * A provider over {@code dataSource} with the lock table {@code tableName}, the
	 * database detected from the connection's metadata, and default settings (3 s per
	 * call, idle rows swept after a day).
	 */
	public JdbcLockProvider(DataSource dataSource, String tableName) {
		this(builder(dataSource).tableName(tableName));
	}

	private JdbcLockProvider(Builder builder) {
		this.listenerDataSource = (builder.listenerDataSource != null) ? builder.listenerDataSource
				: builder.dataSource;
		this.tableName = checkTableName(builder.tableName);
		this.sweepAfter = positive("sweepAfter", builder.sweepAfter);
		this.dialect = builder.dialect;
		String database = (builder.dialect != null) ? JdbcSchema.label(builder.dialect) : "the database";
		this.calls = new JdbcCalls(builder.dataSource, positive("storeTimeout", builder.storeTimeout), database,
				builder.directWindow);
		this.mutexes = new JdbcMutexes(this, this.calls, this.listenerDataSource);
		this.schema = new JdbcSchema(this, this.calls);
		BlockRefusals refusals = new BlockRefusals();
		this.readWrite = new JdbcReadWriteLocks(this, this.calls, refusals);
		this.multi = new JdbcMultiLocks(this, this.calls, this.mutexes);
		this.semaphores = new JdbcSemaphores(this.calls, this.tableName, this::dialect,
				new LazySignals(this.listenerDataSource, this::dialect, this.tableName, "_permit"), refusals);
		this.latches = new JdbcLatches(this.calls, this.tableName, this::dialect,
				new LazySignals(this.listenerDataSource, this::dialect, this.tableName, "_latch"));
		this.sweep = new JdbcSweep(this.mutexes, this.readWrite, this.semaphores, this.latches, this.tableName,
				this.sweepAfter);
		// Scheduled last: the sweep reaches every member of the family.
		this.sweep.schedule(this.calls);
	}

	/** A builder for a provider over {@code dataSource}. */
	public static Builder builder(DataSource dataSource) {
		return new Builder(dataSource);
	}

	@Override
	public String storeName() {
		return "jdbc";
	}

	/** Every call returns within the store timeout. */
	@Override
	public Duration callTimeout() {
		return this.calls.timeout();
	}

	/**
	 * Statements block their thread: those of waits that hold none run on threads of the
	 * store's.
	 */
	@Override
	public Optional<Executor> callExecutor() {
		return Optional.of(this.callThreads);
	}

	/** The lock table's name. */
	public String tableName() {
		return this.tableName;
	}

	/** The dialect, detected from the database at the first call if not given. */
	public JdbcLockDialect dialect() {
		JdbcLockDialect known = this.dialect;
		if (known != null) {
			return known;
		}
		return this.calls.call("", "find out which database holds the lock table '" + this.tableName + "'",
				this::dialect, null);
	}

	/** The dialect, detected from {@code connection}'s metadata at the first call. */
	JdbcLockDialect dialect(Connection connection) throws SQLException {
		JdbcLockDialect known = this.dialect;
		if (known == null) {
			known = JdbcLockDialect.detect(connection.getMetaData());
			this.dialect = known;
			this.calls.database(JdbcSchema.label(known));
		}
		return known;
	}

	/**
	 * On PostgreSQL, waiters are woken by {@code NOTIFY} when a lock they wait for is
	 * released, over one listening connection per provider (see
	 * {@link PostgresReleaseSignals}); elsewhere there are no signals, and waiters poll
	 * with jittered backoff.
	 */
	@Override
	public ReleaseSignals releaseSignals() {
		return this.mutexes.releaseSignals();
	}

	/** Keys that a waiter of this JVM listens for; 0 when nobody waits. */
	public int subscribedKeys() {
		return this.mutexes.subscribedKeys() + this.semaphores.subscribedKeys();
	}

	/**
	 * On PostgreSQL, waiters for a permit are woken by {@code NOTIFY} when a permit of
	 * their semaphore is freed, on a channel of the semaphores' own; elsewhere they poll.
	 */
	@Override
	public ReleaseSignals permitSignals() {
		return this.semaphores.signals();
	}

	/**
	 * Countdown latches as rows of their own tables (see {@link JdbcLatches}), woken by
	 * {@code NOTIFY} on PostgreSQL and by one poller per provider elsewhere.
	 */
	@Override
	public Optional<LatchStore> latches() {
		return Optional.of(this.latches);
	}

	/**
	 * Plain locks, read-write locks ({@link LockKind#SHARED}, see
	 * {@link JdbcReadWriteLocks}), semaphores ({@link LockKind#PERMITS}, see
	 * {@link JdbcSemaphores}) and multi-key locks ({@link LockKind#MULTI}, see
	 * {@link JdbcMultiLocks}).
	 */
	@Override
	public Set<LockKind> kinds() {
		return KINDS;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Answers on the calling thread, within the store timeout.
	 */
	@Override
	public CompletionStage<LockAttempt> tryLock(LockRequest request) {
		return LockAttempt.of(() -> switch (request.kind()) {
			case EXCLUSIVE -> {
				JdbcLockDialect.Acquire[] outcome = new JdbcLockDialect.Acquire[1];
				LockAttempt attempt = this.mutexes.tryLockBlock(request.key(), request.leaseTime(), request.waiting(),
						request.tokens(), outcome);
				yield this.readWrite.afterWriterAttempt(request, attempt, outcome[0] == null || outcome[0].readers());
			}
			case SHARED -> this.readWrite.tryLockShared(request.key(), request.leaseTime(), request.waiting());
			case PERMITS -> {
				checkKey(request.key());
				yield this.semaphores.tryAcquire(request.key(), request.permits(), request.leaseTime(),
						request.waiting());
			}
			case MULTI -> this.multi.tryLockAll(request.keys(), request.leaseTime(), request.waiting());
			default -> throw Capabilities.unsupported(this, request.kind(), request.key());
		});
	}

	/** Ends a waiting writer's intent at once (see {@link JdbcReadWriteLocks}). */
	@Override
	public void withdraw(LockRequest request) {
		String waiter = request.waiterId();
		if (request.kind() == LockKind.EXCLUSIVE && waiter != null) {
			this.readWrite.withdraw(request.key(), waiter);
		}
	}

	/**
	 * One statement on PostgreSQL, one transaction on MariaDB and MySQL (see
	 * {@link JdbcMultiLocks}).
	 */
	@Override
	public List<Boolean> releaseAll(List<LockHandle> handles) {
		return this.multi.releaseAll(handles);
	}

	/**
	 * True on PostgreSQL, where a multi-key lease's keys are released in one statement on
	 * one connection. On MariaDB and MySQL that takes a transaction of two statements,
	 * which is slower than the keys' own releases, one statement each on connections of
	 * their own, sent together.
	 */
	@Override
	public boolean releasesHoldsTogether() {
		return dialect().name().equals("postgresql");
	}

	/** A fresh owner: {@code <instance uuid>:<sequence>}. */
	String newOwner() {
		return this.instanceId + ":" + this.sequence.incrementAndGet();
	}

	/** See {@link JdbcMutexes#renewAll}. */
	@Override
	public void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		this.mutexes.renewAll(handles, leaseTimes, results);
	}

	/**
	 * Checks that the lock table exists with the columns this store uses, and, on MariaDB
	 * and MySQL, that its key column compares keys exactly (a binary collation); then
	 * that the lock family's tables the same DDL creates beside it are there with their
	 * columns: the lock table's name followed by {@code _reader} and {@code _intent}
	 * (read-write locks), {@code _semaphore} and {@code _permit} (semaphores),
	 * {@code _latch} and {@code _latch_participant} (countdown latches).
	 * @throws IllegalStateException naming what is missing and where the DDL is, or the
	 * key column's collation and the {@code ALTER TABLE} that fixes it
	 */
	public void validateSchema() {
		this.schema.validate();
	}

	/**
	 * Creates the lock table if it does not exist, with the DDL shipped for this database
	 * ({@code classpath:dev/distlock/jdbc/schema-<database>.sql}) under this provider's
	 * table name.
	 */
	public void createTableIfMissing() {
		this.schema.createIfMissing();
	}

	/**
	 * Deletes rows whose lease ran out more than the sweep age ago; runs by itself once
	 * an hour (at most once per sweep age).
	 * @return the number of rows deleted
	 */
	public int sweep() {
		return this.sweep.locks();
	}

	/**
	 * Deletes permits whose lease ran out, semaphores without permits idle for longer
	 * than {@code idle}, and latches expired for longer than {@code idle}; part of the
	 * hourly sweep.
	 * @return the number of rows deleted
	 */
	int sweepFamily(Duration idle) {
		return this.sweep.family(idle);
	}

	/** Stops the listener, the sweep and the worker threads. */
	@Override
	public void close() {
		this.mutexes.close();
		this.semaphores.close();
		this.latches.close();
		this.calls.close();
		this.callThreads.close();
	}

	/**
	 * Checks that {@code tableName} is an SQL identifier, optionally qualified by a
	 * schema, and returns it.
	 * @throws IllegalArgumentException naming what is wrong with it
	 */
	public static String checkTableName(String tableName) {
		if (tableName == null || !TABLE_NAME.matcher(tableName).matches()) {
			throw new IllegalArgumentException("The lock table name must be an SQL identifier (letters, digits and"
					+ " '_', not starting with a digit, at most 63 characters), optionally qualified by a schema"
					+ " ('schema.table'), but was '" + tableName + "'");
		}
		return tableName;
	}

	static void checkKey(String key) {
		if (key.length() > MAX_KEY_LENGTH) {
			throw new IllegalArgumentException("The JDBC store takes lock keys of at most " + MAX_KEY_LENGTH
					+ " characters (the table's name column), but got one of " + key.length() + ": '"
					+ key.substring(0, 40) + "...'");
		}
	}

	private static Duration positive(String what, Duration duration) {
		if (duration.isNegative() || duration.isZero()) {
			throw new IllegalArgumentException(what + " must be positive but was " + duration);
		}
		return duration;
	}

	/**
	 * Settings of a {@link JdbcLockProvider}; every one has a default but the data
	 * source.
	 */
	public static final class Builder {

		private final DataSource dataSource;

		private @Nullable DataSource listenerDataSource;

		private String tableName = DEFAULT_TABLE_NAME;

		private Duration storeTimeout = DEFAULT_STORE_TIMEOUT;

		private Duration sweepAfter = DEFAULT_SWEEP_AFTER;

		private @Nullable JdbcLockDialect dialect;

		private Duration directWindow = JdbcCalls.DEFAULT_DIRECT_WINDOW;

		private Builder(DataSource dataSource) {
			this.dataSource = dataSource;
		}

		/** The lock table; {@code distributed_lock} by default. */
		public Builder tableName(String tableName) {
			this.tableName = tableName;
			return this;
		}

		/**
		 * The longest any call may take, whatever the pool's timeouts; 3 s by default.
		 */
		public Builder storeTimeout(Duration storeTimeout) {
			this.storeTimeout = storeTimeout;
			return this;
		}

		/**
		 * How long a row stays after its lease ran out before the sweep deletes it; a day
		 * by default. The database's clock must never step back by more than this, or a
		 * swept key could issue a token lower than one it issued before.
		 */
		public Builder sweepAfter(Duration sweepAfter) {
			this.sweepAfter = sweepAfter;
			return this;
		}

		/**
		 * The dialect, instead of detecting it (say, MySQL's SQL on a MariaDB server).
		 */
		public Builder dialect(JdbcLockDialect dialect) {
			this.dialect = dialect;
			return this;
		}

		/**
		 * Where the PostgreSQL release listener gets its one connection: a data source
		 * outside the pool (a plain driver connection), so waiting never holds a pooled
		 * connection; the provider's data source by default.
		 */
		public Builder listenerDataSource(DataSource listenerDataSource) {
			this.listenerDataSource = listenerDataSource;
			return this;
		}

		/**
		 * For tests: how long after a successful call the next ones run on their caller's
		 * thread (zero: always on a worker, a day: always on the caller's thread).
		 */
		Builder directWindow(Duration directWindow) {
			this.directWindow = directWindow;
			return this;
		}

		public JdbcLockProvider build() {
			return new JdbcLockProvider(this);
		}

	}

}
