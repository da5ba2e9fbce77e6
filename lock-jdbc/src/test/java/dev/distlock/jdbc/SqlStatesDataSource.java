package dev.distlock.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.datasource.DelegatingDataSource;

/**
 * A real pool that records the SQL state of every failure its connections and statements
 * throw, so that a test sees failures the store recovered from by itself (a deadlock
 * victim run again, say).
 */
final class SqlStatesDataSource extends DelegatingDataSource {

	private final List<String> states = new CopyOnWriteArrayList<>();

	SqlStatesDataSource(DataSource target) {
		super(target);
	}

	/** The SQL states thrown so far, in order. */
	List<String> states() {
		return this.states;
	}

	@Override
	public Connection getConnection() throws SQLException {
		Connection connection = super.getConnection();
		return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
				(proxy, method, args) -> {
					Object result = invoke(method, connection, args);
					if (result instanceof Statement statement) {
						Class<?> type = method.getReturnType();
						return Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { type },
								(statementProxy, statementMethod, statementArgs) -> invoke(statementMethod, statement,
										statementArgs));
					}
					return result;
				});
	}

	private Object invoke(Method method, Object target, Object @Nullable [] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			if (ex.getCause() instanceof SQLException sql) {
				this.states.add(String.valueOf(sql.getSQLState()));
			}
			throw ex.getCause();
		}
	}

}
