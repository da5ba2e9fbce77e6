package dev.distlock.sample;

import java.util.List;

import dev.distlock.harness.jdbc.PostgresServer;
import dev.distlock.harness.redis.RedisServer;
import dev.distlock.jdbc.JdbcLockProvider;
import dev.distlock.sample.order.OrderConfirmation;
import dev.distlock.sample.order.OrderService;
import dev.distlock.spi.LockProvider;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link AbstractOversellEndToEndTests} with the {@code jdbc} profile: the locks (and
 * their fencing tokens) in a real PostgreSQL server that this test starts, the stock in a
 * real redis-server. The settings are the profile's own ({@code distributed-lock.store:
 * jdbc}, {@code initialize-schema: always}); only the connection is passed.
 */
class JdbcOversellEndToEndTests extends AbstractOversellEndToEndTests {

	private @Nullable RedisServer redis;

	private @Nullable PostgresServer postgres;

	@Override
	void startServers() {
		this.redis = RedisServer.start();
		this.postgres = PostgresServer.start();
	}

	@Override
	void stopServers() {
		if (this.postgres != null) {
			this.postgres.close();
		}
		if (this.redis != null) {
			this.redis.close();
		}
	}

	@Override
	List<String> instanceArguments() {
		RedisServer redis = this.redis;
		PostgresServer postgres = this.postgres;
		return List.of("--spring.profiles.active=jdbc", "--spring.datasource.url=" + postgres.jdbcUrl(),
				"--spring.datasource.username=" + postgres.username(),
				"--spring.datasource.password=" + postgres.password(), "--spring.data.redis.host=" + redis.host(),
				"--spring.data.redis.port=" + redis.port(), "--sample.work-pause=10ms");
	}

	@Test
	void theLocksAreRowsInPostgresql() {
		assertThat(first().getBean(LockProvider.class)).isInstanceOf(JdbcLockProvider.class);
		OrderService orders = first().getBean(OrderService.class);
		orders.restock("row-sku", 2);
		OrderConfirmation order = orders.placeOrder("row-sku");
		JdbcTemplate database = new JdbcTemplate(this.postgres.dataSource());
		List<Long> fences = database.queryForList("SELECT fence FROM distributed_lock WHERE name LIKE ?", Long.class,
				"%stock:row-sku");
		// the row keeps the last token of the block reserved for local hand-over (the
		// acquirer's and 32 passes by default), so it covers every local holder's token
		assertThat(fences).singleElement()
			.satisfies((fence) -> assertThat(fence).isBetween(order.fencingToken(), order.fencingToken() + 32));
	}

}
