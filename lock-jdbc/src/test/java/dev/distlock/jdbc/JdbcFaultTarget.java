package dev.distlock.jdbc;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.LockSupport;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.TcpProxy;
import dev.distlock.harness.fault.FaultTarget;
import dev.distlock.harness.jdbc.DatabaseServer;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The servers of one JDBC fault run: a PostgreSQL or MariaDB server of its own that the
 * faults hit (killed, frozen, its connections cut), with the locks in its table
 * {@code fault_lock}, and the redis-server of {@link JdbcStoreFixture} for the fenced
 * resource, which no fault touches. The clients connect through a byte-level
 * {@link TcpProxy} (latency, partitions), with the pool's and the driver's default
 * settings.
 */
final class JdbcFaultTarget implements FaultTarget {

	static final String TABLE = "fault_lock";

	private final DatabaseServer database;

	private final JdbcStoreFixture fixture;

	private final TcpProxy proxy;

	JdbcFaultTarget(DatabaseServer database) {
		this.database = database;
		this.fixture = new JdbcStoreFixture(database, TABLE);
		this.proxy = TcpProxy.start(database.port());
	}

	DatabaseServer database() {
		return this.database;
	}

	/** Between the clients and the database. */
	TcpProxy proxy() {
		return this.proxy;
	}

	@Override
	public Class<? extends ProviderFactory> providerFactory() {
		return this.fixture.providerFactory();
	}

	@Override
	public Class<? extends ResourceFactory> resourceFactory() {
		return this.fixture.resourceFactory();
	}

	@Override
	public Map<String, String> settings() {
		Map<String, String> settings = new LinkedHashMap<>(this.fixture.settings());
		settings.put(JdbcProviderFactory.URL, this.database.jdbcUrl()
			.replace("127.0.0.1:" + this.database.port() + "/", "127.0.0.1:" + this.proxy.port() + "/"));
		return settings;
	}

	/**
	 * Rows still held (an owner and a lease not yet run out: a lock, a read hold, a
	 * permit) once every JVM is gone, waiting at most a lease and 3 s for what a dead
	 * client left to expire.
	 */
	@Override
	public int leftInStore(Duration lease, StringBuilder detail) {
		JdbcTemplate admin = new JdbcTemplate(this.database.dataSource());
		long deadline = System.nanoTime() + lease.plusSeconds(3).toNanos();
		List<String> held;
		String now = this.database.kind().equals("mariadb") ? "UTC_TIMESTAMP(6)" : "clock_timestamp()";
		do {
			held = admin.queryForList(
					"SELECT CONCAT(name, ' by ', owner) FROM " + TABLE + " WHERE owner IS NOT NULL AND expires_at > "
							+ now + " UNION ALL SELECT CONCAT('read hold of ', name, ' by ', owner) FROM " + TABLE
							+ "_reader WHERE expires_at > " + now
							+ " UNION ALL SELECT CONCAT('permit of ', name, ' by ', owner)" + " FROM " + TABLE
							+ "_permit WHERE expires_at > " + now,
					String.class);
			if (held.isEmpty()) {
				return 0;
			}
			// a bounded poll: a tight loop would starve the server it asks
			LockSupport.parkNanos(20_000_000L);
		}
		while (System.nanoTime() - deadline < 0);
		detail.append(", in ").append(TABLE).append("*: ").append(held);
		return held.size();
	}

	@Override
	public void close() {
		try {
			this.proxy.close();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		finally {
			this.fixture.close();
		}
	}

}
