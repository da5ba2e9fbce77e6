package dev.distlock.zookeeper;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.reactive.DefaultReactiveLockTemplate;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignals;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.contract.Conditions;
import org.apache.curator.framework.CuratorFramework;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Waits that hold no thread (asynchronous and reactive callers), on a real server: their
 * attempts run on whichever worker is free, not on the thread that subscribed to the
 * key's releases, yet each waiter keeps one place in the key's queue and is woken by the
 * watch on the node ahead of it. The templates poll only once a minute, so a waiter that
 * is not woken, or whose own place blocks it, misses the bounds.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Tag("server")
class ZookeeperThreadlessWaitTests {

	private static final Duration LEASE = Duration.ofSeconds(30);

	private static final Duration WOKEN = Duration.ofSeconds(20);

	private static final int PIPELINES = 40;

	@RegisterExtension
	final WatchedClients clients = new WatchedClients();

	@Test
	void anAsynchronousWaiterTakesTheLockWhenAnotherClientReleasesIt() throws Exception {
		String key = "threadless-one";
		DefaultLockTemplate holder = this.clients.template(this.clients.provider(this.clients.client()), LEASE);
		DefaultLockTemplate waiter = this.clients.template(this.clients.provider(this.clients.client()), LEASE);
		Lease held = holder.acquire(key, LockOptions.defaults());
		// The first attempt runs on this thread, which never makes another: every later
		// one runs on a worker of the template's.
		CompletableFuture<Optional<Lease>> waiting = waiter.acquireAsync(key, LockOptions.defaults());
		assertThat(waiting).isNotDone();
		held.release();
		Optional<Lease> lease = waiting.get(WOKEN.toSeconds(), TimeUnit.SECONDS);
		assertThat(lease).isPresent();
		lease.get().release();
	}

	@Test
	void twoAsynchronousWaitersOfOneClientBothTakeTheLockInTurn() throws Exception {
		String key = "threadless-two";
		DefaultLockTemplate holder = this.clients.template(this.clients.provider(this.clients.client()), LEASE);
		DefaultLockTemplate waiter = this.clients.template(this.clients.provider(this.clients.client()), LEASE);
		Lease held = holder.acquire(key, LockOptions.defaults());
		// Other lease times: two lines of the template, each with a waiter at the store,
		// both subscribed on this thread.
		CompletableFuture<Optional<Lease>> first = waiter.acquireAsync(key, LockOptions.defaults());
		CompletableFuture<Optional<Lease>> second = waiter.acquireAsync(key,
				LockOptions.builder().leaseTime(LEASE.plusSeconds(1)).build());
		held.release();
		CompletableFuture<Object> either = CompletableFuture.anyOf(first, second);
		Optional<?> one = (Optional<?>) either.get(WOKEN.toSeconds(), TimeUnit.SECONDS);
		assertThat(one).isPresent();
		assertThat(first.isDone() && second.isDone()).as("both held at once").isFalse();
		((Lease) one.get()).release();
		CompletableFuture<Optional<Lease>> other = first.isDone() ? second : first;
		Optional<Lease> next = other.get(WOKEN.toSeconds(), TimeUnit.SECONDS);
		assertThat(next).isPresent();
		next.get().release();
	}

	@Test
	void aWaiterThatGivesUpLeavesNoNodeInTheQueue() throws Exception {
		String key = "threadless-gives-up";
		CuratorFramework client = this.clients.client();
		ZookeeperLockProvider provider = this.clients.provider(client);
		DefaultLockTemplate holder = this.clients.template(provider, LEASE);
		DefaultLockTemplate waiter = this.clients.template(this.clients.provider(this.clients.client()), LEASE);
		Lease held = holder.acquire(key, LockOptions.defaults());
		CompletableFuture<Optional<Lease>> waiting = waiter.acquireAsync(key,
				LockOptions.builder().waitTime(Duration.ofSeconds(1)).build());
		assertThat(waiting.get(WOKEN.toSeconds(), TimeUnit.SECONDS)).isEmpty();
		Conditions.await("only the holder's node left", WOKEN, () -> queued(client, provider, key) == 1);
		held.release();
		Conditions.await("no node left", WOKEN, () -> queued(client, provider, key) <= 0);
	}

	@Test
	void anAttemptTakesThePlaceFurthestAheadOfItsClient() throws Exception {
		String key = "threadless-front";
		CuratorFramework client = this.clients.client();
		ZookeeperLockProvider holder = this.clients.provider(client);
		ZookeeperLockProvider waiter = this.clients.provider(this.clients.client());
		LockHandle held = ((LockAttempt.Acquired) LockAttempt.join(holder.tryLock(LockRequest.exclusive(key, LEASE))))
			.handle();
		LockRequest waiting = LockRequest.exclusive(key, LEASE).withWaiting(true);
		ExecutorService callers = Executors.newFixedThreadPool(2);
		try (ReleaseSignals.Subscription one = waiter.releaseSignals().subscribe(key, () -> {
		}); ReleaseSignals.Subscription two = waiter.releaseSignals().subscribe(key, () -> {
		})) {
			// Two attempts at once take both places: two nodes behind the holder's.
			for (int i = 0; i < 200 && queued(client, holder, key) < 3; i++) {
				CyclicBarrier start = new CyclicBarrier(2);
				Callable<LockAttempt> attempt = () -> {
					start.await();
					return LockAttempt.join(waiter.tryLock(waiting));
				};
				for (Future<LockAttempt> busy : callers.invokeAll(List.of(attempt, attempt))) {
					assertThat(busy.get()).isInstanceOf(LockAttempt.Busy.class);
				}
			}
			assertThat(queued(client, holder, key)).isEqualTo(3);
			assertThat(held.release()).isTrue();
			LockAttempt next = LockAttempt.join(waiter.tryLock(waiting));
			assertThat(next).isInstanceOf(LockAttempt.Acquired.class);
			assertThat(((LockAttempt.Acquired) next).handle().release()).isTrue();
		}
		finally {
			callers.shutdownNow();
		}
	}

	@Test
	void aReactiveWaiterTakesTheLockWhenAnotherClientReleasesIt() {
		String key = "threadless-reactive";
		CuratorFramework client = this.clients.client();
		ZookeeperLockProvider provider = this.clients.provider(client);
		DefaultLockTemplate holder = this.clients.template(provider, LEASE);
		DefaultReactiveLockTemplate waiter = new DefaultReactiveLockTemplate(
				this.clients.template(this.clients.provider(this.clients.client()), LEASE));
		for (int round = 0; round < 5; round++) {
			Lease held = holder.acquire(key, LockOptions.defaults());
			CompletableFuture<Integer> run = waiter.executeMono(key, LockOptions.defaults(), () -> Mono.just(1))
				.toFuture();
			// Its subscription and first attempt on one worker; its later attempts on
			// any.
			Conditions.await("the waiter queued", WOKEN, () -> queued(client, provider, key) == 2);
			held.release();
			assertThat(run).succeedsWithin(WOKEN).isEqualTo(1);
		}
	}

	@Test
	void reactiveHoldersOnTwoClientsExcludeEachOtherAndNoneIsLeftWaiting() {
		String key = "threadless-many";
		DefaultReactiveLockTemplate one = new DefaultReactiveLockTemplate(
				this.clients.template(this.clients.provider(this.clients.client()), LEASE));
		DefaultReactiveLockTemplate two = new DefaultReactiveLockTemplate(
				this.clients.template(this.clients.provider(this.clients.client()), LEASE));
		AtomicInteger inside = new AtomicInteger();
		AtomicInteger overlaps = new AtomicInteger();
		List<Mono<Integer>> runs = new ArrayList<>();
		for (int i = 0; i < PIPELINES; i++) {
			DefaultReactiveLockTemplate caller = (i % 2 == 0) ? one : two;
			int index = i;
			runs.add(caller.executeMono(key, LockOptions.defaults(), () -> Mono.fromCallable(() -> {
				if (inside.incrementAndGet() != 1) {
					overlaps.incrementAndGet();
				}
				return index;
			}).delayElement(Duration.ofMillis(1)).doOnNext((value) -> inside.decrementAndGet())));
		}
		// A waiter left unwoken polls only after a minute, past this bound.
		List<Integer> done = Flux.merge(runs).collectList().block(Duration.ofSeconds(40));
		assertThat(done).hasSize(PIPELINES);
		assertThat(overlaps).hasValue(0);
	}

	/** The nodes in the key's queue. */
	private static int queued(CuratorFramework client, ZookeeperLockProvider provider, String key) {
		try {
			return client.getChildren().forPath(provider.nodes().parentPath(key)).size();
		}
		catch (Exception ex) {
			return -1;
		}
	}

}
