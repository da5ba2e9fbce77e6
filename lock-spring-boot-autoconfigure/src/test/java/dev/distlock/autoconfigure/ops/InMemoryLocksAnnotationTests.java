package dev.distlock.autoconfigure.ops;

import dev.distlock.DistributedLock;
import dev.distlock.test.AutoConfigureInMemoryLocks;
import dev.distlock.test.LockAssert;
import dev.distlock.test.LockRecorder;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The test kit as a user would use it: {@link AutoConfigureInMemoryLocks} on a
 * {@code @SpringBootTest} of an application that has Redis on its class path but no Redis
 * running: locks are taken in memory, and {@link LockRecorder} tells which keys a call
 * locked.
 */
// A whole application context with every auto-configuration on the class path.
@Tag("slow")
@DirtiesContext
@SpringBootTest(classes = InMemoryLocksAnnotationTests.OrdersApplication.class,
		properties = "distributed-lock.locks.orders.wait-time=1s")
@AutoConfigureInMemoryLocks
class InMemoryLocksAnnotationTests {

	@Autowired
	Orders orders;

	@Autowired
	LockRecorder locks;

	@BeforeEach
	void clear() {
		this.locks.clear();
	}

	@Test
	void shippingLocksTheOrder() {
		assertThat(this.orders.ship(42)).isEqualTo("shipped 42");
		this.locks.assertAcquiredExactly("order:42");
		assertThat(this.locks.assertAcquired("order:42").name()).isEqualTo("orders");
		this.locks.assertAllReleased();
	}

	@Test
	void aCallWithoutTheAnnotationTakesNoLock() {
		this.orders.track(42);
		this.locks.assertNoneAcquired();
	}

	@SpringBootApplication(exclude = DataSourceAutoConfiguration.class)
	static class OrdersApplication {

		@Bean
		Orders orders() {
			return new Orders();
		}

	}

	static class Orders {

		@DistributedLock(key = "'order:' + #id", name = "orders")
		public String ship(long id) {
			LockAssert.assertLocked("order:" + id);
			return "shipped " + id;
		}

		public void track(long id) {
			LockAssert.assertNotLocked();
		}

	}

}
