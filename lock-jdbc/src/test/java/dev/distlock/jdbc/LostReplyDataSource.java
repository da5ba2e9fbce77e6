package dev.distlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A real pool whose next statement of a given kind runs for real and then fails as if its
 * reply were lost on the way back (SQL state 08006, what pgjdbc throws when the backend
 * dies after it committed); optionally every connection asked for after that is refused
 * (SQL state 08001, as while the server restarts) until {@link #heal()}.
 */
final class LostReplyDataSource extends DelegatingDataSource {

	private static final Set<String> EXECUTE = Set.of("execute", "executeQuery", "executeUpdate");

	private volatile @Nullable String armedFragment;

	private volatile boolean refuseAfterwards;

	private volatile boolean atCommit;

	private volatile boolean refusing;

	private final AtomicInteger repliesLost = new AtomicInteger();

	LostReplyDataSource(DataSource target) {
		super(target);
	}

	/**
	 * The next statement whose SQL contains {@code fragment} runs, then fails as a lost
	 * reply; with {@code refuseAfterwards}, every later connection is refused until
	 * {@link #heal()}.
	 */
	void loseNextReply(String fragment, boolean refuseAfterwards) {
		this.refuseAfterwards = refuseAfterwards;
		this.atCommit = false;
		this.armedFragment = fragment;
	}

	/**
	 * The next statement whose SQL contains {@code fragment} runs; if it ran in a
	 * transaction, that transaction commits, and then the reply is lost, so that what the
	 * server kept is the whole transaction's work.
	 */
	void loseNextCommitReply(String fragment) {
		this.refuseAfterwards = false;
		this.atCommit = true;
		this.armedFragment = fragment;
	}

	/** Connections are given again. */
	void heal() {
		this.armedFragment = null;
		this.refusing = false;
	}

	/** Replies lost so far. */
	int repliesLost() {
		return this.repliesLost.get();
	}

	@Override
	public Connection getConnection() throws SQLException {
		if (this.refusing) {
			throw new SQLException("Connection to the database refused (injected)", "08001");
		}
		Connection connection = super.getConnection();
		AtomicBoolean commitReplyLost = new AtomicBoolean();
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					Object result = invoke(method, connection, args);
					if (result instanceof PreparedStatement statement && args != null
							&& args[0] instanceof String sql) {
						return statement(statement, sql, connection, commitReplyLost);
					}
					boolean commits = method.getName().equals("commit")
							|| (method.getName().equals("setAutoCommit") && Boolean.TRUE.equals(args[0]));
					if (commits && commitReplyLost.getAndSet(false)) {
						throw lost();
					}
					return result;
				});
	}

	private PreparedStatement statement(PreparedStatement statement, String sql, Connection connection,
			AtomicBoolean commitReplyLost) {
		return (PreparedStatement) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { PreparedStatement.class }, (proxy, method, args) -> {
					Object result = invoke(method, statement, args);
					String fragment = this.armedFragment;
					if (EXECUTE.contains(method.getName()) && fragment != null && sql.contains(fragment)
							&& takeArmed(fragment)) {
						if (this.atCommit && !connection.getAutoCommit()) {
							commitReplyLost.set(true);
							return result;
						}
						if (result instanceof ResultSet rows) {
							rows.close();
						}
						throw lost();
					}
					return result;
				});
	}

	private SQLException lost() {
		this.refusing = this.refuseAfterwards;
		this.repliesLost.incrementAndGet();
		return new SQLException(
				"An I/O error occurred while sending to the backend (injected: the statement ran, its reply was lost)",
				"08006");
	}

	private synchronized boolean takeArmed(String fragment) {
		if (fragment.equals(this.armedFragment)) {
			this.armedFragment = null;
			return true;
		}
		return false;
	}

	private static Object invoke(Method method, Object target, Object @Nullable [] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
