package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockBackendException;
import dev.distlock.LockContext;
import dev.distlock.LockMode;
import dev.distlock.LockOptions;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.support.DefaultLockTemplate;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Read-write locks on ZooKeeper when a session dies, and the order of the key's one queue
 * of readers' and writers' nodes. Every waiter's retry interval is a minute, so a waiter
 * that was not woken by its watch fails by timing out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperReadWriteSessionTests {

	/**
	 * Minutes, so that no waiter is woken by its busy answer's lease hint within the
	 * tests' bounds.
	 */
	private static final Duration LEASE = Duration.ofMinutes(2);

	private static final LockOptions READ = LockOptions.builder().mode(LockMode.READ).build();

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	private CuratorFramework client() {
		return this.clients.client();
	}

	private ZookeeperLockProvider provider(CuratorFramework client) {
		return this.clients.provider(client);
	}

	private DefaultLockTemplate template(ZookeeperLockProvider provider) {
		return this.clients.template(provider, LEASE);
	}

	private static String key() {
		return "rw-session-" + UUID.randomUUID();
	}

	@Test
	void aReaderWhoseSessionEndsLetsTheWaitingWriterInAndIsTold() throws Exception {
		String key = key();
		CuratorFramework readerClient = client();
		DefaultLockTemplate readers = template(provider(readerClient));
		ZookeeperLockProvider writerProvider = provider(client());
		DefaultLockTemplate writers = template(writerProvider);
		Lease reader = readers.acquire(key, READ);
		assertThat(LockAttempt.join(writerProvider.tryLock(LockRequest.exclusive(key, LEASE))))
			.as("the key is read-held")
			.isInstanceOf(LockAttempt.Busy.class);
		CompletableFuture<Lease> writer = CompletableFuture
			.supplyAsync(() -> writers.acquire(key, LockOptions.defaults()), TestThreads.EACH);
		Conditions.await("the writer's node to queue", Duration.ofSeconds(10),
				() -> queue(writerProvider, key).stream().anyMatch((node) -> node.contains("-lock-")));
		TestZookeeper.expireSession(readerClient);
		Lease taken = writer.get(20, TimeUnit.SECONDS);
		assertThat(taken.fencingToken()).isGreaterThan(reader.fencingToken());
		Conditions.await("the reader of the dead session is told", Duration.ofSeconds(30), () -> !reader.isHeld());
		assertThatExceptionOfType(LeaseLostException.class).isThrownBy(reader::release);
		assertThat(LockAttempt.join(writerProvider.tryLock(LockRequest.shared(key, LEASE)))).as("the writer holds")
			.isInstanceOf(LockAttempt.Busy.class);
		taken.release();
	}

	/**
	 * A waiting writer's node is its intent: new readers wait behind it. When its session
	 * ends, the node goes with it, and the readers it held back come in at once. The
	 * writer itself is told as a mutex waiter is: its next look finds its node gone and
	 * its acquire fails with {@link LockBackendException} (or, if it looks only after its
	 * client has a new session, it queues again behind the readers).
	 */
	@Test
	void aWaitingWriterWhoseSessionEndsLetsTheReadersItHeldBackIn() throws Exception {
		String key = key();
		ZookeeperLockProvider firstProvider = provider(client());
		LockHandle firstReader = acquired(LockAttempt.join(firstProvider.tryLock(LockRequest.shared(key, LEASE))));
		CuratorFramework writerClient = client();
		DefaultLockTemplate writers = template(provider(writerClient));
		CompletableFuture<Lease> writer = CompletableFuture
			.supplyAsync(() -> writers.acquire(key, LockOptions.defaults()), TestThreads.EACH);
		Conditions.await("the writer's node to queue", Duration.ofSeconds(10),
				() -> queue(firstProvider, key).stream().anyMatch((node) -> node.contains("-lock-")));
		assertThat(LockAttempt.join(firstProvider.tryLock(LockRequest.shared(key, LEASE))))
			.as("a new reader behind the waiting writer")
			.isInstanceOf(LockAttempt.Busy.class);
		DefaultLockTemplate readers = template(provider(client()));
		CompletableFuture<Lease> reader = CompletableFuture.supplyAsync(() -> readers.acquire(key, READ),
				TestThreads.EACH);
		Conditions.await("the second reader's node to queue", Duration.ofSeconds(10),
				() -> queue(firstProvider, key).stream().filter((node) -> node.contains("-read-")).count() == 2);
		TestZookeeper.expireSession(writerClient);
		Lease second = reader.get(20, TimeUnit.SECONDS);
		assertThat(firstReader.release()).isTrue();
		second.release();
		CompletableFuture<Long> told = writer.handle((lease, failure) -> {
			if (failure != null) {
				assertThat(failure).hasCauseInstanceOf(LockBackendException.class)
					.hasMessageContaining("its session ended");
				return 0L;
			}
			try (lease) {
				return lease.fencingToken();
			}
		});
		assertThat(told.get(20, TimeUnit.SECONDS)).satisfiesAnyOf((token) -> assertThat(token).isZero(),
				(token) -> assertThat(token).isGreaterThan(second.fencingToken()));
	}

	/**
	 * Readers and writers are served in the order they queued: a reader that queued
	 * behind a writer comes in when that writer leaves, before a writer that queued after
	 * it; that writer waits for the reader.
	 */
	@Test
	void aReaderQueuedBeforeALaterWriterComesInFirst() throws Exception {
		readersQueuedBeforeALaterWriterComeInFirst(1);
	}

	/**
	 * Every reader of a client that waits behind a writer keeps a node of its own in the
	 * queue, so all of them come in when that writer leaves, before a writer that queued
	 * after them; not one of them per writer.
	 */
	@Test
	void everyWaitingReaderOfAClientComesInBeforeALaterWriter() throws Exception {
		readersQueuedBeforeALaterWriterComeInFirst(2);
	}

	/** {@code count} readers of one client wait behind a writer, then a second writer. */
	private void readersQueuedBeforeALaterWriterComeInFirst(int count) throws Exception {
		String key = key();
		ZookeeperLockProvider firstProvider = provider(client());
		LockHandle firstWriter = acquired(LockAttempt.join(firstProvider.tryLock(LockRequest.exclusive(key, LEASE))));
		DefaultLockTemplate readers = template(provider(client()));
		CountDownLatch leave = new CountDownLatch(1);
		List<CompletableFuture<Long>> tokens = new ArrayList<>();
		List<CompletableFuture<?>> readings = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			CompletableFuture<Long> token = new CompletableFuture<>();
			tokens.add(token);
			readings.add(CompletableFuture.runAsync(() -> readers.run(key, READ, () -> {
				token.complete(LockContext.current().orElseThrow().fencingToken());
				await(leave);
			}), TestThreads.EACH));
		}
		Conditions.await("every reader's node to queue", Duration.ofSeconds(10),
				() -> queue(firstProvider, key).stream().filter((node) -> node.contains("-read-")).count() == count);
		DefaultLockTemplate writers = template(provider(client()));
		CompletableFuture<Long> writer = CompletableFuture.supplyAsync(() -> {
			try (Lease lease = writers.acquire(key, LockOptions.defaults())) {
				return lease.fencingToken();
			}
		}, TestThreads.EACH);
		Conditions.await("the second writer's node to queue", Duration.ofSeconds(10),
				() -> queue(firstProvider, key).stream().filter((node) -> node.contains("-lock-")).count() == 2);
		assertThat(firstWriter.release()).isTrue();
		long lastRead = 0;
		for (CompletableFuture<Long> token : tokens) {
			lastRead = Math.max(lastRead, token.get(20, TimeUnit.SECONDS));
		}
		assertThat(writer).as("the later writer waits for the readers").isNotDone();
		leave.countDown();
		assertThat(writer.get(20, TimeUnit.SECONDS)).isGreaterThan(lastRead);
		for (CompletableFuture<?> reading : readings) {
			reading.get(20, TimeUnit.SECONDS);
		}
	}

	/**
	 * A writer that gives up takes its node out of the queue before the withdraw returns:
	 * a reader of another client, asking right after, finds no writer ahead.
	 */
	@Test
	void aWithdrawnIntentIsGoneForEveryClientWhenTheWithdrawReturns() {
		ZookeeperLockProvider readerProvider = provider(client());
		ZookeeperLockProvider writerProvider = provider(client());
		for (int round = 0; round < 50; round++) {
			String key = key();
			LockHandle reader = acquired(LockAttempt.join(readerProvider.tryLock(LockRequest.shared(key, LEASE))));
			LockRequest writer = LockRequest.exclusive(key, LEASE).withWriter("w", LEASE).withIntentRecorded(true);
			assertThat(LockAttempt.join(writerProvider.tryLock(writer))).isInstanceOf(LockAttempt.Busy.class);
			writerProvider.withdraw(writer);
			assertThat(queue(readerProvider, key)).as("the queue after the withdraw, round %d", round)
				.noneMatch((node) -> node.contains("-lock-"));
			assertThat(reader.release()).isTrue();
		}
	}

	private static List<String> queue(ZookeeperLockProvider provider, String key) {
		return provider.nodes().queue(key, provider.nodes().parentPath(key), provider.calls().deadline());
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new IllegalStateException("not let go");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static LockHandle acquired(LockAttempt attempt) {
		assertThat(attempt).isInstanceOf(LockAttempt.Acquired.class);
		return ((LockAttempt.Acquired) attempt).handle();
	}

}
