package dev.distlock.autoconfigure.jdbc;

/**
 * The JDBC store's lock table, or a column of it, is missing at startup. The message (the
 * cause's) names what is missing and where the DDL is.
 */
public class MissingLockTableException extends IllegalStateException {

	private static final long serialVersionUID = 1L;

	private final String tableName;

	private final String schemaResource;

	MissingLockTableException(String tableName, String schemaResource, IllegalStateException cause) {
		super(cause.getMessage(), cause);
		this.tableName = tableName;
		this.schemaResource = schemaResource;
	}

	/** The lock table's name ({@code distributed-lock.jdbc.table-name}). */
	public String tableName() {
		return this.tableName;
	}

	/** The class path resource of the DDL for the application's database. */
	public String schemaResource() {
		return this.schemaResource;
	}

}
