/**
 * The SQL of the JDBC store, one dialect per database: PostgreSQL, MariaDB, MySQL 8.
 */
@NullMarked
package dev.distlock.jdbc.dialect;

import org.jspecify.annotations.NullMarked;
