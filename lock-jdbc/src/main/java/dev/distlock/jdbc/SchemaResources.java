package dev.distlock.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The DDL files shipped in lock-jdbc's jar, read as the stores run them: comment lines
 * left out, the last statement's semicolon dropped.
 */
final class SchemaResources {

	private SchemaResources() {
	}

	/** The DDL at {@code resource} on lock-jdbc's class path. */
	static String read(String resource) {
		try (InputStream in = SchemaResources.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("Missing " + resource + " in lock-jdbc's jar");
			}
			StringBuilder sql = new StringBuilder();
			for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
				if (!line.startsWith("--")) {
					sql.append(line).append('\n');
				}
			}
			String statement = sql.toString().trim();
			return statement.endsWith(";") ? statement.substring(0, statement.length() - 1) : statement;
		}
		catch (IOException ex) {
			throw new IllegalStateException("Cannot read " + resource, ex);
		}
	}

}
