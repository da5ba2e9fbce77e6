package dev.distlock.autoconfigure.diagnostics;

import dev.distlock.autoconfigure.jdbc.MissingLockTableException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;

/** The JDBC store's lock table, or a column of it, is missing. */
@Order(Ordered.HIGHEST_PRECEDENCE)
class MissingLockTableFailureAnalyzer extends AbstractFailureAnalyzer<MissingLockTableException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, MissingLockTableException cause) {
		return new FailureAnalysis(cause.getMessage(),
				"Create the table '" + cause.tableName() + "' with the DDL in lock-jdbc's jar at classpath:"
						+ cause.schemaResource() + " (with the table name changed if you chose another), or set"
						+ " distributed-lock.jdbc.initialize-schema=always to have it created at startup.",
				cause);
	}

}
