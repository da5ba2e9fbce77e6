package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * A connection's network timeout, set for one call and given back after it: a read the
 * server never answers ends at the timeout even where the driver's abort, query timeout
 * or cancel cannot end it (they wait for that read, or ask the server that stopped
 * answering). A pool shared with the application gets its connections back with their own
 * timeout.
 */
final class NetworkTimeout implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(NetworkTimeout.class);

	private final Connection connection;

	private final int own;

	private NetworkTimeout(Connection connection, int own) {
		this.connection = connection;
		this.own = own;
	}

	/** Sets {@code connection}'s network timeout to {@code millis} (at least 1). */
	static NetworkTimeout set(Connection connection, long millis) throws SQLException {
		int own = connection.getNetworkTimeout();
		connection.setNetworkTimeout(Runnable::run, (int) Math.min(Integer.MAX_VALUE, Math.max(1, millis)));
		return new NetworkTimeout(connection, own);
	}

	@Override
	public void close() {
		try {
			if (!this.connection.isClosed()) {
				this.connection.setNetworkTimeout(Runnable::run, this.own);
			}
		}
		catch (SQLException ex) {
			// A broken connection, which the pool drops anyway.
			logger.debug("Could not give a JDBC connection back its network timeout", ex);
		}
	}

}
