package dev.distlock.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;
import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.BatchRenewal;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

import static dev.distlock.jdbc.TestDatabases.acquired;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What the JDBC store's read-write and multi-key locks add to the published contracts, on
 * a real database server: two providers, as two JVMs, over pools of their own.
 */
@Tag("server")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
abstract class AbstractJdbcFamilyTests {

	private static final String TABLE = "family_lock";

	private static final Duration LONG = Duration.ofSeconds(30);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	private JdbcLockProvider provider;

	private JdbcLockProvider other;

	private SqlStatesDataSource states;

	private SqlStatesDataSource otherStates;

	/** Pools with HikariCP's default settings on the server under test. */
	abstract Supplier<HikariDataSource> dataSources();

	/** A fragment of the statement that writes the keys of a multi-key lock. */
	abstract String multiKeyWrite();

	/** The dialect the providers speak; null to detect the server's. */
	@Nullable JdbcLockDialect dialect() {
		return null;
	}

	@BeforeAll
	void start() {
		this.states = new SqlStatesDataSource(closing(dataSources().get()));
		this.otherStates = new SqlStatesDataSource(closing(dataSources().get()));
		this.provider = closing(JdbcPair.provider(this.states, TABLE, dialect()));
		this.provider.createTableIfMissing();
		this.other = closing(JdbcPair.provider(this.otherStates, TABLE, dialect()));
	}

	@AfterAll
	void stop() throws Exception {
		for (int i = this.closeables.size() - 1; i >= 0; i--) {
			this.closeables.get(i).close();
		}
	}

	private <T extends AutoCloseable> T closing(T closeable) {
		this.closeables.add(closeable);
		return closeable;
	}

	private static List<String> keys(String prefix, int count) {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			keys.add(prefix + "-" + i);
		}
		return keys;
	}

	/**
	 * Threads of two providers take overlapping key sets, plain locks and read locks of
	 * the same keys for a few seconds: no statement is ever a deadlock victim (the store
	 * would run it again, hiding it: the pools record every failure), because every
	 * multi-key acquisition locks its rows in key order.
	 */
	@Test
	void overlappingMultiKeyLocksNeverDeadlock() throws Exception {
		List<String> keys = keys("overlap-" + UUID.randomUUID(), 8);
		List<List<String>> sets = List.of(keys.subList(0, 5), keys.subList(3, 8), List.of(keys.get(0), keys.get(7)),
				keys.subList(1, 7));
		this.states.states().clear();
		this.otherStates.states().clear();
		AtomicInteger taken = new AtomicInteger();
		long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		List<CompletableFuture<Void>> workers = new ArrayList<>();
		for (int t = 0; t < 6; t++) {
			JdbcLockProvider on = (t % 2 == 0) ? this.provider : this.other;
			Random random = new Random(t);
			workers.add(CompletableFuture.runAsync(() -> {
				while (System.nanoTime() - end < 0) {
					int pick = random.nextInt(6);
					if (pick < 4) {
						LockAttempt attempt = LockAttempt.join(on.tryLock(LockRequest.all(sets.get(pick), LONG)));
						if (attempt instanceof LockAttempt.AcquiredAll all) {
							taken.incrementAndGet();
							assertThat(on.releaseAll(all.handles())).containsOnly(true);
						}
					}
					else {
						String key = keys.get(random.nextInt(keys.size()));
						LockRequest request = (pick == 4) ? LockRequest.exclusive(key, LONG)
								: LockRequest.shared(key, LONG);
						if (LockAttempt.join(on.tryLock(request)) instanceof LockAttempt.Acquired one) {
							assertThat(one.handle().release()).isTrue();
						}
					}
				}
			}, TestThreads.EACH));
		}
		CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
		assertThat(taken.get()).as("multi-key acquisitions").isPositive();
		// Class 40: a transaction rolled back as a deadlock or serialization victim. (A
		// duplicate key, 23xxx, is a first write of a key racing with another: run
		// again.)
		List<String> failures = new ArrayList<>(this.states.states());
		failures.addAll(this.otherStates.states());
		assertThat(failures).as("SQL states of failed statements").noneMatch((state) -> state.startsWith("40"));
	}

	/**
	 * Batch renewals of many held keys, handed their leases in opposite orders, beside
	 * another provider's multi-key attempts on the same keys (each locking the rows it
	 * finds, held or not, in key order, until it rolls back), for a few seconds: no
	 * statement is ever a deadlock victim (the store would run it again, hiding it: the
	 * pools record every failure), because a batch renewal locks its rows in key order
	 * too, whatever order its leases come in, and every renewal renews every key.
	 */
	@Test
	void batchRenewalsAndMultiKeyAttemptsNeverDeadlock() throws Exception {
		List<String> keys = keys("renew-all-" + UUID.randomUUID(), 16).stream().sorted().toList();
		// Rows written in reverse key order: a scan of the table meets them in that
		// order.
		List<LockHandle> reversed = new ArrayList<>();
		for (int i = keys.size() - 1; i >= 0; i--) {
			reversed.add(acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(keys.get(i), LONG)))));
		}
		List<LockHandle> held = new ArrayList<>(reversed);
		Collections.reverse(held);
		List<Duration> leases = Collections.nCopies(held.size(), LONG);
		this.states.states().clear();
		this.otherStates.states().clear();
		List<String> lost = new CopyOnWriteArrayList<>();
		AtomicInteger renewals = new AtomicInteger();
		AtomicInteger attempts = new AtomicInteger();
		long end = System.nanoTime() + Duration.ofSeconds(3).toNanos();
		List<CompletableFuture<Void>> workers = new ArrayList<>();
		for (List<LockHandle> order : List.of(held, reversed)) {
			workers.add(CompletableFuture.runAsync(() -> {
				while (System.nanoTime() - end < 0) {
					this.provider.renewAll(order, leases, new BatchRenewal.RenewalResults() {

						@Override
						public void renewed(int index, boolean renewed) {
							if (!renewed) {
								lost.add(order.get(index).key());
							}
						}

						@Override
						public void failed(int index, RuntimeException failure) {
							lost.add(order.get(index).key() + ": " + failure);
						}

					});
					renewals.incrementAndGet();
				}
			}, TestThreads.EACH));
		}
		for (int t = 0; t < 2; t++) {
			workers.add(CompletableFuture.runAsync(() -> {
				while (System.nanoTime() - end < 0) {
					assertThat(LockAttempt.join(this.other.tryLock(LockRequest.all(keys, LONG))))
						.isInstanceOf(LockAttempt.Busy.class);
					attempts.incrementAndGet();
				}
			}, TestThreads.EACH));
		}
		CompletableFuture.allOf(workers.toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
		assertThat(renewals.get()).as("batch renewals").isPositive();
		assertThat(attempts.get()).as("multi-key attempts").isPositive();
		assertThat(lost).as("leases not renewed").isEmpty();
		List<String> failures = new ArrayList<>(this.states.states());
		failures.addAll(this.otherStates.states());
		assertThat(failures).as("SQL states of failed statements").noneMatch((state) -> state.startsWith("40"));
		for (LockHandle handle : held) {
			assertThat(handle.release()).isTrue();
		}
	}

	/**
	 * A reader that dies (its provider closed, nothing renewed or released) keeps the key
	 * only until its own lease ends, even while another reader renews for much longer:
	 * once the live reader leaves, a writer waits for the dead one's lease only.
	 */
	@Test
	void aKilledReadersHoldLapsesAtItsOwnLease() {
		String key = "killed-reader-" + UUID.randomUUID();
		Duration deadLease = Duration.ofSeconds(2);
		try (HikariDataSource pool = dataSources().get();
				JdbcLockProvider doomed = JdbcPair.provider(pool, TABLE, dialect())) {
			acquired(LockAttempt.join(doomed.tryLock(LockRequest.shared(key, deadLease))));
		}
		LockHandle live = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LONG))));
		assertThat(live.renew(LONG)).isTrue();
		assertThat(live.release()).isTrue();
		LockAttempt busy = LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG)));
		if (busy instanceof LockAttempt.Busy hint) {
			assertThat(hint.remaining()).as("the writer waits for the dead reader's lease only")
				.isLessThanOrEqualTo(deadLease);
		}
		else {
			((LockAttempt.Acquired) busy).handle().release();
		}
		AtomicReference<LockHandle> writer = new AtomicReference<>();
		Conditions.await("the writer, once the dead reader's lease ran out", deadLease.plusSeconds(5), () -> {
			LockAttempt attempt = LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG)));
			if (attempt instanceof LockAttempt.Acquired acquired) {
				writer.set(acquired.handle());
			}
			return writer.get() != null;
		});
		assertThat(writer.get().release()).isTrue();
	}

	/**
	 * A waiting writer's busy attempt behind a reader holds every new reader back, of any
	 * JVM, until it takes the key; the reader's hint is the intent's time left, not zero.
	 */
	@Test
	void aWaitingWriterIsNotStarvedByNewReaders() {
		String key = "writer-first-" + UUID.randomUUID();
		LockRequest writer = LockRequest.exclusive(key, LONG).withWriter("writer-1", LONG);
		LockHandle first = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LONG))));
		assertThat(LockAttempt.join(this.other.tryLock(writer))).isInstanceOf(LockAttempt.Busy.class);
		for (JdbcLockProvider reader : List.of(this.provider, this.other)) {
			LockAttempt late = LockAttempt.join(reader.tryLock(LockRequest.shared(key, LONG).withWaiting(true)));
			assertThat(late).as("a new reader while the writer waits").isInstanceOf(LockAttempt.Busy.class);
			assertThat(((LockAttempt.Busy) late).remaining()).isPositive();
		}
		assertThat(first.release()).isTrue();
		LockHandle written = acquired(LockAttempt.join(this.other.tryLock(writer.withIntentRecorded(true))));
		assertThat(written.fencingToken()).isGreaterThan(first.fencingToken());
		assertThat(written.release()).isTrue();
		LockHandle after = acquired(LockAttempt.join(this.provider.tryLock(LockRequest.shared(key, LONG))));
		assertThat(after.release()).isTrue();
	}

	/**
	 * A multi-key attempt whose write ran but whose reply was lost, with the database
	 * then unreachable for that provider, fails; its transaction was rolled back, so no
	 * key is held, at once, for anyone else, including the keys it had already written.
	 */
	@Test
	void aMultiKeyAttemptThatFailsMidwayLeavesNoKeyHeld() {
		List<String> keys = keys("midway-" + UUID.randomUUID(), 3);
		// Rows for the first two keys, none for the last.
		for (String key : keys.subList(0, 2)) {
			assertThat(acquired(LockAttempt.join(this.provider.tryLock(LockRequest.exclusive(key, LONG)))).release())
				.isTrue();
		}
		LostReplyDataSource lossy = new LostReplyDataSource(closing(dataSources().get()));
		try (JdbcLockProvider failing = JdbcPair.provider(lossy, TABLE, dialect())) {
			acquired(LockAttempt.join(failing.tryLock(LockRequest.exclusive("warm-" + UUID.randomUUID(), LONG))))
				.release();
			lossy.loseNextReply(multiKeyWrite(), true);
			assertThatExceptionOfType(LockBackendException.class)
				.isThrownBy(() -> LockAttempt.join(failing.tryLock(LockRequest.all(keys, LONG))));
			assertThat(lossy.repliesLost()).isOne();
			for (String key : keys) {
				assertThat(acquired(LockAttempt.join(this.other.tryLock(LockRequest.exclusive(key, LONG)))).release())
					.as("key %s free at once", key)
					.isTrue();
			}
			lossy.heal();
		}
	}

}
