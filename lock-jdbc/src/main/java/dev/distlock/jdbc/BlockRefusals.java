package dev.distlock.jdbc;

import java.sql.SQLException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Whether a provider still sends MariaDB compound statements ({@code BEGIN NOT ATOMIC
 * ... END}): once a server refuses to parse one (a session in {@code ORACLE} mode parses
 * them as PL/SQL), the provider's read holds and permits send their statements one by one
 * from then on.
 */
final class BlockRefusals {

	private static final Log logger = LogFactory.getLog(BlockRefusals.class);

	private static final int ER_PARSE_ERROR = 1064;

	private volatile boolean refused;

	/** Whether blocks may be sent. */
	boolean allowed() {
		return !this.refused;
	}

	/**
	 * Whether {@code ex} is the server refusing to parse a block, which then ran nothing;
	 * if so, no block is sent again (the first refusal is logged).
	 */
	boolean refusedBy(SQLException ex) {
		if (ex.getErrorCode() != ER_PARSE_ERROR) {
			return false;
		}
		if (!this.refused) {
			this.refused = true;
			logger.info("MariaDB refused a compound statement (" + ex.getMessage() + "); read locks and semaphores"
					+ " send their statements one by one from now on");
		}
		return true;
	}

}
