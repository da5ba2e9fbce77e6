package dev.distlock.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * One call of {@link JdbcCalls} in flight: what the watchdog does at its deadline depends
 * on where it is. Every change of state is a compare-and-set, so that the watchdog
 * interrupts a caller only while it waits for the pool, and aborts a connection only
 * while it runs a statement.
 */
final class CallInFlight {

	// Under the calls' category, where the store's other call failures are logged.
	private static final Log logger = LogFactory.getLog(JdbcCalls.class);

	static final int IDLE = 0;

	static final int BORROWING = 1;

	static final int RUNNING = 2;

	static final int EXPIRED = 3;

	static final int INTERRUPTING = 4;

	static final int INTERRUPTED = 5;

	static final int ABORTED = 6;

	private static final AtomicIntegerFieldUpdater<CallInFlight> STATE = AtomicIntegerFieldUpdater
		.newUpdater(CallInFlight.class, "state");

	final Thread caller;

	final long deadline;

	volatile int state = IDLE;

	/**
	 * Whether an attempt failed after its statement went out, in a way that leaves
	 * unknown whether the server ran it.
	 */
	volatile boolean mayHaveRun;

	/** The failure of the latest attempt that was followed by another. */
	volatile @Nullable SQLException lastFailure;

	private volatile @Nullable Connection connection;

	CallInFlight(Thread caller, long deadline) {
		this.caller = caller;
		this.deadline = deadline;
	}

	boolean timedOut() {
		return this.state >= EXPIRED;
	}

	/**
	 * Whether the call is, or was at its deadline, still waiting for a connection.
	 */
	boolean waitingForThePool() {
		int state = this.state;
		return state == BORROWING || state == INTERRUPTING || state == INTERRUPTED;
	}

	/** Before asking the pool; false when the deadline has come. */
	boolean borrowing() {
		return STATE.compareAndSet(this, IDLE, BORROWING);
	}

	/**
	 * After the pool answered ({@code connection} null when it failed); false when the
	 * deadline came while waiting.
	 */
	boolean borrowed(@Nullable Connection connection) {
		this.connection = connection;
		return STATE.compareAndSet(this, BORROWING, (connection != null) ? RUNNING : IDLE);
	}

	/** After the statement. */
	void ran() {
		this.connection = null;
		STATE.compareAndSet(this, RUNNING, IDLE);
	}

	/** The watchdog, at the deadline. */
	void expire() {
		if (STATE.compareAndSet(this, IDLE, EXPIRED)) {
			return;
		}
		if (STATE.compareAndSet(this, BORROWING, INTERRUPTING)) {
			this.caller.interrupt();
			this.state = INTERRUPTED;
			return;
		}
		Connection running = this.connection;
		if (running != null && STATE.compareAndSet(this, RUNNING, ABORTED)) {
			// A driver may block in abort (MariaDB's connects to the server to kill the
			// statement, then waits for the blocked read): not on the watchdog's thread,
			// which keeps the other calls' deadlines.
			Thread aborter = new Thread(() -> abort(running), "distlock-jdbc-abort");
			aborter.setDaemon(true);
			aborter.start();
		}
	}

	/**
	 * At the end of the call: clears the watchdog's interrupt, once it has surely been
	 * delivered.
	 */
	void finish() {
		if (STATE.compareAndSet(this, IDLE, EXPIRED) || this.state < INTERRUPTING || this.state == ABORTED) {
			return;
		}
		while (this.state == INTERRUPTING) {
			Thread.onSpinWait();
		}
		Thread.interrupted();
	}

	private static void abort(Connection connection) {
		try {
			connection.abort(Runnable::run);
		}
		catch (SQLException | RuntimeException ex) {
			logger.debug("Could not abort a JDBC connection whose statement outlived the store timeout", ex);
		}
	}

}
