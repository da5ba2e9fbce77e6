package dev.distlock.docs;

import dev.distlock.TransactionLock;
import dev.distlock.TransactionLocks;

import org.springframework.transaction.annotation.Transactional;

/**
 * The code of {@code docs/stores/jdbc.md}.
 */
class JdbcStorePage {

	class Annotated {

		// @formatter:off
		@Transactional
		@TransactionLock(key = "'account:' + #id")                // waitTime = "2s" to override wait-time
		public void debit(long id, long cents) { }
		// @formatter:on

	}

	class Programmatic {

		TransactionLocks transactionLocks;

		// @formatter:off
		@Transactional
		public void debit(long id, long cents) {
			long token = transactionLocks.lock("account:" + id);   // or tryLock(key, waitTime)
			debit(id, cents, token);
		}
		// @formatter:on

		void debit(long id, long cents, long token) {
		}

	}

}
