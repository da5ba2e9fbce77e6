/**
 * A lock store in this JVM's memory, for tests and single-instance applications.
 */
@NullMarked
package dev.distlock.inmemory;

import org.jspecify.annotations.NullMarked;
