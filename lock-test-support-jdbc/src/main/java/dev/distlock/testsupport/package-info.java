/**
 * Real PostgreSQL and MariaDB server processes on free loopback ports, for the tests of
 * JDBC stores and of their users.
 */
@NullMarked
package dev.distlock.testsupport;

import org.jspecify.annotations.NullMarked;
