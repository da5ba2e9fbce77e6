package dev.distlock.autoconfigure.endpoint;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import dev.distlock.Lease;
import dev.distlock.LeaseLostException;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.contract.Conditions;
import dev.distlock.contract.TestThreads;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@code /actuator/distributedlocks} over real HTTP on a random port: a held lock with
 * its name, holder thread, fencing token, held-for and remaining lease; the threads
 * waiting for it; the last lease loss; keys masked unless {@code show-values} allows
 * them; and no operation that could free a lock.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("slow")
class DistributedLocksEndpointTests {

	@Nested
	@DirtiesContext
	@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT,
			properties = { "distributed-lock.store=in-memory",
					"management.endpoints.web.exposure.include=distributedlocks,health",
					"management.endpoint.distributedlocks.show-values=always" })
	class ShowingValues {

		@LocalServerPort
		int port;

		@Autowired
		LockTemplate template;

		@Test
		@SuppressWarnings("unchecked")
		void showsHeldLocksWaitersAndLossesWithTheirKeys() throws Exception {
			String key = "order:" + UUID.randomUUID();
			CountDownLatch holding = new CountDownLatch(1);
			CountDownLatch done = new CountDownLatch(1);
			Thread holder = new Thread(() -> this.template.run(key, LockOptions.builder().name("stock").build(), () -> {
				holding.countDown();
				await(done);
			}), "order-worker-1");
			holder.start();
			assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
			CompletableFuture<Void> waiter = CompletableFuture.runAsync(() -> this.template.run(key, () -> {
			}), TestThreads.EACH);
			String lostKey = "report:" + UUID.randomUUID();
			Lease lost = this.template.acquire(lostKey,
					LockOptions.builder().leaseTime(Duration.ofMillis(50)).autoRenew(false).build());
			Conditions.await("the short lease is lost", Duration.ofSeconds(10), () -> !lost.isHeld());
			assertThatExceptionOfType(LeaseLostException.class).isThrownBy(lost::release);
			Conditions.await("a waiter for " + key + " and the loss", Duration.ofSeconds(10), () -> {
				try {
					Map<String, Object> seen = EndpointTestApplication.locks(this.port);
					return ((Map<String, Object>) seen.get("waitingThreads")).containsKey(key)
							&& !((List<?>) seen.get("recentLosses")).isEmpty();
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			});
			Map<String, Object> body = EndpointTestApplication.locks(this.port);
			assertThat(body).containsEntry("store", "in-memory");
			List<Map<String, Object>> held = (List<Map<String, Object>>) body.get("held");
			assertThat(held).hasSize(1);
			assertThat(held.get(0)).containsEntry("key", key)
				.containsEntry("name", "stock")
				.containsEntry("holderThreads", List.of("order-worker-1"))
				.containsEntry("leaseTimeMillis", 30000);
			assertThat(((Number) held.get(0).get("fencingToken")).longValue()).isPositive();
			assertThat(((Number) held.get(0).get("remainingLeaseMillis")).longValue()).isPositive();
			assertThat(((Number) held.get(0).get("heldForMillis")).longValue()).isNotNegative();
			assertThat((Map<String, Object>) body.get("waitingThreads")).containsEntry(key, 1);
			List<Map<String, Object>> losses = (List<Map<String, Object>>) body.get("recentLosses");
			assertThat(losses).first().satisfies((loss) -> {
				assertThat(loss).containsEntry("key", lostKey).containsKeys("fencingToken", "reason", "at");
				assertThat((String) loss.get("reason")).contains("ran out");
			});
			done.countDown();
			waiter.get(10, TimeUnit.SECONDS);
			holder.join(10_000);
			assertThat((List<?>) EndpointTestApplication.locks(this.port).get("held")).isEmpty();
		}

		@Test
		void offersNoWayToFreeALock() throws Exception {
			for (String method : List.of("POST", "DELETE", "PUT")) {
				assertThat(EndpointTestApplication.call(method, this.port, "/actuator/distributedlocks").statusCode())
					.as(method)
					.isIn(404, 405);
			}
		}

	}

	@Nested
	@DirtiesContext
	@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = WebEnvironment.RANDOM_PORT, properties = {
			"distributed-lock.store=in-memory", "management.endpoints.web.exposure.include=distributedlocks" })
	class ByDefault {

		@LocalServerPort
		int port;

		@Autowired
		LockTemplate template;

		@Test
		@SuppressWarnings("unchecked")
		void masksKeys() throws Exception {
			String key = "customer:" + UUID.randomUUID();
			this.template.run(key, () -> {
				try {
					Map<String, Object> body = EndpointTestApplication.locks(this.port);
					List<Map<String, Object>> held = (List<Map<String, Object>>) body.get("held");
					assertThat(held).singleElement()
						.satisfies((lock) -> assertThat(lock).containsEntry("key", "******"));
					assertThat(body.toString()).doesNotContain(key);
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			});
		}

	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
