package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;
import javax.sql.DataSource;

import dev.distlock.LockBackendException;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.BatchRelease;
import dev.distlock.spi.BatchRenewal;
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
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
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
 * renewal tick ({@link BatchRenewal}).
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
 */
public final class JdbcLockProvider
		implements ReleaseSignalling, BatchRenewal, BatchRelease, LocalHandover, AutoCloseable {

	private static final Log logger = LogFactory.getLog(JdbcLockProvider.class);

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

	/** Leases renewed per statement. */
	private static final int RENEW_BATCH = 500;

	private static final Set<LockKind> KINDS = Set
		.copyOf(EnumSet.of(LockKind.EXCLUSIVE, LockKind.SHARED, LockKind.PERMITS, LockKind.MULTI));

	private static final List<String> COLUMNS = List.of("name", "owner", "fence", "expires_at", "waited");

	private final DataSource dataSource;

	private final DataSource listenerDataSource;

	private final String tableName;

	private final Duration sweepAfter;

	private volatile @Nullable JdbcLockDialect dialect;

	private final JdbcCalls calls;

	private final String instanceId = UUID.randomUUID().toString();

	private final AtomicLong sequence = new AtomicLong();

	private volatile @Nullable PostgresReleaseSignals signals;

	private final Object signalsLock = new Object();

	private volatile boolean closed;

	private final JdbcSemaphores semaphores;

	private final JdbcLatches latches;

	private final JdbcReadWriteLocks readWrite;

	private final JdbcMultiLocks multi;

	/**
	 * A provider over {@code dataSource} with the lock table {@code tableName}, the
	 * database detected from the connection's metadata, and default settings (3 s per
	 * call, idle rows swept after a day).
	 */
	public JdbcLockProvider(DataSource dataSource, String tableName) {
		this(builder(dataSource).tableName(tableName));
	}

	private JdbcLockProvider(Builder builder) {
		this.dataSource = builder.dataSource;
		this.listenerDataSource = (builder.listenerDataSource != null) ? builder.listenerDataSource
				: builder.dataSource;
		this.tableName = checkTableName(builder.tableName);
		this.sweepAfter = positive("sweepAfter", builder.sweepAfter);
		this.dialect = builder.dialect;
		String database = (builder.dialect != null) ? label(builder.dialect) : "the database";
		this.calls = new JdbcCalls(builder.dataSource, positive("storeTimeout", builder.storeTimeout), database,
				builder.directWindow);
		this.readWrite = new JdbcReadWriteLocks(this, this.calls);
		this.multi = new JdbcMultiLocks(this, this.calls);
		this.semaphores = new JdbcSemaphores(this.calls, this.tableName, this::dialect,
				new LazySignals(this.listenerDataSource, this::dialect, this.tableName, "_permit"));
		this.latches = new JdbcLatches(this.calls, this.tableName, this::dialect,
				new LazySignals(this.listenerDataSource, this::dialect, this.tableName, "_latch"));
		// Scheduled last: the sweep reaches every member of the family.
		long sweepEvery = Math.min(TimeUnit.HOURS.toNanos(1), this.sweepAfter.toNanos());
		this.calls.scheduler()
			.scheduleWithFixedDelay(() -> this.calls.background(this::sweepQuietly),
					ThreadLocalRandom.current().nextLong(sweepEvery), sweepEvery, TimeUnit.NANOSECONDS);
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

	private JdbcLockDialect dialect(Connection connection) throws SQLException {
		JdbcLockDialect known = this.dialect;
		if (known == null) {
			known = JdbcLockDialect.detect(connection.getMetaData());
			this.dialect = known;
			this.calls.database(label(known));
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
		if (dialect().releaseChannel(this.tableName) == null) {
			return ReleaseSignals.NONE;
		}
		PostgresReleaseSignals current = this.signals;
		if (current == null) {
			synchronized (this.signalsLock) {
				current = this.signals;
				if (current == null) {
					current = new PostgresReleaseSignals(this.listenerDataSource,
							dialect().releaseChannel(this.tableName));
					if (this.closed) {
						current.close();
					}
					this.signals = current;
				}
			}
		}
		return current;
	}

	/** Keys that a waiter of this JVM listens for; 0 when nobody waits. */
	public int subscribedKeys() {
		PostgresReleaseSignals current = this.signals;
		return ((current != null) ? current.subscribedKeys() : 0) + this.semaphores.subscribedKeys();
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
				LockAttempt attempt = tryLockBlock(request.key(), request.leaseTime(), request.waiting(),
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

	/** A fresh owner: {@code <instance uuid>:<sequence>}. */
	String newOwner() {
		return this.instanceId + ":" + this.sequence.incrementAndGet();
	}

	/**
	 * One statement takes a free or expired row (an update and then an insert for a key's
	 * first acquisition on MariaDB and MySQL); a busy answer costs one more, which reads
	 * the holder's remaining lease and, when {@code waiting}, marks the row so that its
	 * release is signalled.
	 * <p>
	 * The acquire moves the row's fence to the block's last token ({@code max(fence + 1,
	 * clock) + tokens - 1}), so a block costs no extra statement. The handle's renewals
	 * and release check that last token.
	 */
	private LockAttempt tryLockBlock(String key, Duration leaseTime, boolean waiting, int tokens,
			JdbcLockDialect.Acquire[] outcome) {
		if (tokens < 1) {
			throw new IllegalArgumentException("A token block holds at least one token but was " + tokens);
		}
		checkKey(key);
		long leaseMicros = micros(leaseTime);
		String owner = newOwner();
		// Past this, a lock the call may have taken has run out by itself.
		long undoUntil = System.nanoTime() + leaseTime.toNanos() + this.calls.timeout().toNanos();
		JdbcLockDialect.Acquire acquire = this.calls.call(key, "acquire lock '" + key + "'",
				(connection) -> dialect(connection).acquire(connection, this.tableName, key, owner, leaseMicros,
						waiting, tokens),
				(late) -> {
					if (late == null || late.acquired()) {
						undo(key, owner, undoUntil);
					}
				});
		outcome[0] = acquire;
		if (acquire.acquired()) {
			return new LockAttempt.Acquired(new JdbcLockHandle(key, owner, acquire.fence(), acquire.lastFence()));
		}
		return new LockAttempt.Busy(Duration.ofNanos(TimeUnit.MICROSECONDS.toNanos(acquire.remainingMicros())));
	}

	/**
	 * An acquisition that ended without its result (its reply came late, or never, and
	 * its statement may have run) may have taken the lock for an owner nobody knows:
	 * freed by that owner, in the background, tried again until it succeeds or the lease
	 * it may have taken has run out ({@code untilNanos}).
	 */
	private void undo(String key, String owner, long untilNanos) {
		this.calls.backgroundUntil("undo an acquisition of lock '" + key + "' that ended without its result",
				(connection) -> dialect(connection).undo(connection, this.tableName, key, owner), untilNanos);
	}

	/**
	 * One statement per {@value #RENEW_BATCH} leases; a failed statement fails the leases
	 * it carried only.
	 */
	@Override
	public void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		List<LockHandle> plain = new ArrayList<>(handles.size());
		List<Duration> plainLeases = new ArrayList<>(handles.size());
		List<Integer> at = new ArrayList<>(handles.size());
		for (int i = 0; i < handles.size(); i++) {
			if (handles.get(i) instanceof JdbcLockHandle) {
				plain.add(handles.get(i));
				plainLeases.add(leaseTimes.get(i));
				at.add(i);
			}
			else {
				// A read hold: one transaction of its own.
				try {
					results.renewed(i, handles.get(i).renew(leaseTimes.get(i)));
				}
				catch (LockBackendException ex) {
					results.failed(i, ex);
				}
			}
		}
		renewPlain(plain, plainLeases, new RenewalResults() {

			@Override
			public void renewed(int index, boolean renewed) {
				results.renewed(at.get(index), renewed);
			}

			@Override
			public void failed(int index, RuntimeException failure) {
				results.failed(at.get(index), failure);
			}

		});
	}

	private void renewPlain(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		for (int from = 0; from < handles.size(); from += RENEW_BATCH) {
			int to = Math.min(handles.size(), from + RENEW_BATCH);
			List<JdbcLockDialect.Lease> leases = new ArrayList<>(to - from);
			for (int i = from; i < to; i++) {
				JdbcLockHandle handle = (JdbcLockHandle) handles.get(i);
				leases
					.add(new JdbcLockDialect.Lease(handle.key, handle.owner, handle.fence, micros(leaseTimes.get(i))));
			}
			boolean[] renewed;
			try {
				renewed = this.calls.call(leases.get(0).key(),
						"renew " + leases.size() + " locks incl. '" + leases.get(0).key() + "'",
						(connection) -> dialect(connection).renewAll(connection, this.tableName, leases), null);
			}
			catch (LockBackendException ex) {
				for (int i = from; i < to; i++) {
					results.failed(i, ex);
				}
				continue;
			}
			for (int i = from; i < to; i++) {
				results.renewed(i, renewed[i - from]);
			}
		}
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
		List<String> missing = this.calls.call("", "check the lock table '" + this.tableName + "'",
				this::missingColumns, null);
		if (missing.isEmpty()) {
			String problem = this.calls.call("", "check the key column of the lock table '" + this.tableName + "'",
					(connection) -> dialect(connection).keyColumnProblem(connection, this.tableName), null);
			if (problem != null) {
				throw new IllegalStateException("distlock's JDBC store cannot use the table '" + this.tableName
						+ "' on " + label(dialect()) + ": " + problem);
			}
			String familyProblem = this.calls.call("",
					"check the lock family's tables of the lock table '" + this.tableName + "'",
					(connection) -> FamilyTables.missingTable(connection, this.tableName), null);
			if (familyProblem != null) {
				throw new IllegalStateException("distlock's JDBC store cannot use " + label(dialect()) + ": "
						+ familyProblem + ". Create it with the DDL in lock-jdbc's jar at classpath:"
						+ dialect().schemaResource() + " (renaming the tables if you chose another name), or set"
						+ " distributed-lock.jdbc.initialize-schema=always to have it created at startup.");
			}
		}
		else {
			JdbcLockDialect known = dialect();
			String what = missing.equals(COLUMNS) ? "the table '" + this.tableName + "' does not exist"
					: "the table '" + this.tableName + "' lacks the column(s) " + String.join(", ", missing);
			throw new IllegalStateException("distlock's JDBC store cannot use " + label(known) + ": " + what
					+ ". Create it with the DDL in lock-jdbc's jar at classpath:" + known.schemaResource()
					+ " (renaming the table if you chose another name), or set"
					+ " distributed-lock.jdbc.initialize-schema=always to have it created at startup.");
		}
	}

	private List<String> missingColumns(Connection connection) throws SQLException {
		try (Statement statement = connection.createStatement()) {
			statement.executeQuery("SELECT " + String.join(", ", COLUMNS) + " FROM " + this.tableName + " WHERE 1 = 0")
				.close();
			return List.of();
		}
		catch (SQLException ex) {
			// PostgreSQL needs no rollback in autocommit; the statement failed alone.
		}
		Set<String> present = new LinkedHashSet<>();
		DatabaseMetaData metaData = connection.getMetaData();
		String schema = null;
		String table = this.tableName;
		int dot = table.indexOf('.');
		if (dot > 0) {
			schema = table.substring(0, dot);
			table = table.substring(dot + 1);
		}
		for (String name : new String[] { table, table.toLowerCase(Locale.ROOT), table.toUpperCase(Locale.ROOT) }) {
			try (ResultSet columns = metaData.getColumns(connection.getCatalog(), schema, name, null)) {
				while (columns.next()) {
					present.add(columns.getString("COLUMN_NAME").toLowerCase(Locale.ROOT));
				}
			}
			if (!present.isEmpty()) {
				break;
			}
		}
		List<String> missing = new ArrayList<>();
		for (String column : COLUMNS) {
			if (!present.contains(column)) {
				missing.add(column);
			}
		}
		return missing.isEmpty() ? COLUMNS : missing;
	}

	/**
	 * Creates the lock table if it does not exist, with the DDL shipped for this database
	 * ({@code classpath:dev/distlock/jdbc/schema-<database>.sql}) under this provider's
	 * table name.
	 */
	public void createTableIfMissing() {
		this.calls.call("", "create the lock table '" + this.tableName + "'", (connection) -> {
			String ddl = ddl(dialect(connection)).replace(DEFAULT_TABLE_NAME, this.tableName);
			// One statement per table: MariaDB's driver runs one statement per call.
			for (String table : ddl.split(";\\s*\\n")) {
				try (Statement statement = connection.createStatement()) {
					statement.execute(table);
				}
			}
			return null;
		}, null);
	}

	private static String ddl(JdbcLockDialect dialect) {
		return SchemaResources.read(dialect.schemaResource());
	}

	/**
	 * Deletes rows whose lease ran out more than the sweep age ago; runs by itself once
	 * an hour (at most once per sweep age).
	 * @return the number of rows deleted
	 */
	public int sweep() {
		long idleMicros = micros(this.sweepAfter);
		return this.calls.call("", "sweep idle rows of the lock table '" + this.tableName + "'",
				(connection) -> dialect(connection).sweep(connection, this.tableName, idleMicros), null);
	}

	/**
	 * Deletes permits whose lease ran out, semaphores without permits idle for longer
	 * than {@code idle}, and latches expired for longer than {@code idle}; part of the
	 * hourly sweep.
	 * @return the number of rows deleted
	 */
	int sweepFamily(Duration idle) {
		long idleMicros = micros(idle);
		return this.semaphores.sweep(idleMicros) + this.latches.sweep(idleMicros);
	}

	private void sweepQuietly() {
		try {
			int swept = sweep() + sweepFamily(this.sweepAfter);
			if (swept > 0 && logger.isDebugEnabled()) {
				logger.debug("Swept " + swept + " idle lock rows from " + this.tableName);
			}
			this.readWrite.sweep(micros(this.sweepAfter));
		}
		catch (RuntimeException ex) {
			logger.debug("Could not sweep idle lock rows; trying again later", ex);
		}
	}

	/** Stops the listener, the sweep and the worker threads. */
	@Override
	public void close() {
		this.closed = true;
		PostgresReleaseSignals current = this.signals;
		if (current != null) {
			current.close();
		}
		this.semaphores.close();
		this.latches.close();
		this.calls.close();
	}

	private static String label(JdbcLockDialect dialect) {
		return switch (dialect.name()) {
			case "postgresql" -> "PostgreSQL";
			case "mariadb" -> "MariaDB";
			default -> "MySQL";
		};
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

	static long micros(Duration duration) {
		return Math.max(1, TimeUnit.NANOSECONDS.toMicros(duration.toNanos()));
	}

	/**
	 * One acquisition: its token is the first of its block; renewals and the release
	 * check the owner and the row's fence, the block's last token.
	 */
	final class JdbcLockHandle implements TokenBlock {

		private final String key;

		final String owner;

		private final long token;

		/** The row's fence while this acquisition holds it: the block's last token. */
		final long fence;

		private volatile boolean releasedToWaiters;

		JdbcLockHandle(String key, String owner, long token, long fence) {
			this.key = key;
			this.owner = owner;
			this.token = token;
			this.fence = fence;
		}

		@Override
		public String key() {
			return this.key;
		}

		@Override
		public long fencingToken() {
			return this.token;
		}

		@Override
		public long lastToken() {
			return this.fence;
		}

		/** From the release statement: whether a waiter had marked the row. */
		@Override
		public boolean releasedToWaiters() {
			return this.releasedToWaiters;
		}

		@Override
		public boolean renew(Duration leaseTime) {
			JdbcLockDialect.Lease lease = new JdbcLockDialect.Lease(this.key, this.owner, this.fence,
					micros(leaseTime));
			return calls.call(this.key, "renew lock '" + this.key + "'",
					(connection) -> dialect(connection).renew(connection, tableName, lease), null);
		}

		/**
		 * {@inheritDoc}
		 * <p>
		 * One statement, re-run on another connection when one turns out dead. A re-run
		 * that finds the lock free with its fence still this acquisition's (nobody took
		 * it since: every acquisition raises the fence) counts the earlier run as the
		 * release, whose reply was lost, rather than report a loss.
		 */
		@Override
		public boolean release() {
			AtomicInteger runs = new AtomicInteger();
			JdbcLockDialect.Release release = calls.call(this.key, "release lock '" + this.key + "'", (connection) -> {
				boolean rerun = runs.getAndIncrement() > 0;
				JdbcLockDialect known = dialect(connection);
				JdbcLockDialect.Release outcome = known.release(connection, tableName, this.key, this.owner, this.fence,
						known.releaseChannel(tableName));
				if (outcome == JdbcLockDialect.Release.NOT_HELD && rerun) {
					return known.releasedAt(connection, tableName, this.key, this.fence);
				}
				return outcome;
			}, null);
			this.releasedToWaiters = (release == JdbcLockDialect.Release.RELEASED_TO_WAITERS);
			return release.released();
		}

		/**
		 * One query: whether the row still has this acquisition's owner and fence, and
		 * its lease has not run out; bounded by the store timeout as every call.
		 */
		@Override
		public boolean stillHeld() {
			return calls.call(this.key, "check the owner of lock '" + this.key + "'",
					(connection) -> dialect(connection).held(connection, tableName, this.key, this.owner, this.fence),
					null);
		}

		@Override
		public String toString() {
			return "JdbcLockHandle[" + this.key + ", owner=" + this.owner + ", token=" + this.token
					+ ((this.fence != this.token) ? ".." + this.fence : "") + "]";
		}

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
