package dev.distlock.jdbc;

import java.lang.reflect.Method;
import java.net.ConnectException;
import java.net.UnknownHostException;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

/**
 * The root cause of a failed call, in words a user acts on: a refused connection, a
 * refused login, an unknown host, else the innermost message. Pools and drivers wrap
 * these (HikariCP's "Failed to initialize pool", pgjdbc's "Connection to ... refused"),
 * and a call that waited for the pool until its deadline sees only the interrupt that
 * ended the wait, so the pool's own last failure to connect is read where the pool keeps
 * one.
 */
final class Causes {

	private Causes() {
	}

	/**
	 * What went wrong, most useful first: "connection refused: ...", "authentication
	 * failed (wrong user name or password?): ...", "unknown host: ...", or the innermost
	 * message.
	 */
	static String describe(Throwable ex) {
		SQLException outermostSql = null;
		Throwable innermost = ex;
		for (Throwable cause = ex; cause != null; cause = next(cause)) {
			innermost = cause;
			if (cause instanceof SQLException sql) {
				if (isAuthentication(sql)) {
					return "authentication failed (wrong user name or password?): " + sql.getMessage();
				}
				if (outermostSql == null) {
					outermostSql = sql;
				}
			}
			if (cause instanceof ConnectException) {
				return "connection refused: "
						+ ((outermostSql != null) ? outermostSql.getMessage() : cause.getMessage());
			}
			if (cause instanceof UnknownHostException) {
				return "unknown host: " + cause.getMessage();
			}
		}
		return String.valueOf(innermost.getMessage());
	}

	/**
	 * SQL state class 28 (invalid authorization: PostgreSQL's 28P01, MariaDB's and
	 * MySQL's 28000).
	 */
	private static boolean isAuthentication(SQLException sql) {
		return sql.getSQLState() != null && sql.getSQLState().startsWith("28");
	}

	private static @Nullable Throwable next(Throwable cause) {
		Throwable next = cause.getCause();
		return (next != cause) ? next : null;
	}

	/**
	 * Whether {@code dataSource} is a HikariCP pool that has not finished starting: it
	 * opens its first connection inside the first call that asks for one, and keeps that
	 * attempt's failure to itself until then.
	 */
	static boolean poolStarting(DataSource dataSource) {
		try {
			Method poolOf = dataSource.getClass().getMethod("getHikariPoolMXBean");
			Method closed = dataSource.getClass().getMethod("isClosed");
			return poolOf.invoke(dataSource) == null && Boolean.FALSE.equals(closed.invoke(dataSource));
		}
		catch (ReflectiveOperationException | RuntimeException | LinkageError ex) {
			return false;
		}
	}

	/**
	 * The last failure of a HikariCP pool to open a connection, while it has not opened
	 * one since; null for another pool, or when it cannot be read. HikariCP keeps it for
	 * the exception it throws after its own connection timeout (30 s by default), which
	 * the store timeout cuts short; it offers no public accessor, so it is read
	 * reflectively, and anything unexpected means null.
	 */
	static @Nullable Throwable lastConnectionFailure(DataSource dataSource) {
		try {
			Method poolOf = dataSource.getClass().getMethod("getHikariPoolMXBean");
			Object pool = poolOf.invoke(dataSource);
			for (Class<?> type = (pool != null) ? pool.getClass() : null; type != null; type = type.getSuperclass()) {
				for (Method method : type.getDeclaredMethods()) {
					if (method.getName().equals("getLastConnectionFailure") && method.getParameterCount() == 0) {
						method.setAccessible(true);
						return (method.invoke(pool) instanceof Throwable failure) ? failure : null;
					}
				}
			}
			return null;
		}
		catch (ReflectiveOperationException | RuntimeException | LinkageError ex) {
			return null;
		}
	}

}
