/**
 * Auto-configuration of the JDBC store.
 */
@NullMarked
package dev.distlock.autoconfigure.jdbc;

import org.jspecify.annotations.NullMarked;
