/**
 * Real PostgreSQL and MariaDB server processes on free loopback ports, for the tests of
 * JDBC store and for the benchmarks.
 */
@NullMarked
package dev.distlock.harness.jdbc;

import org.jspecify.annotations.NullMarked;
