/**
 * The JDBC store: locks as rows of a table in PostgreSQL, MariaDB or MySQL, with database
 * time, per-acquisition owners, fencing tokens, batched renewal and, on PostgreSQL,
 * release signals by {@code LISTEN}/{@code NOTIFY}.
 */
@NullMarked
package dev.distlock.jdbc;

import org.jspecify.annotations.NullMarked;
