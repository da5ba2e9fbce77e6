/**
 * Auto-configuration of the in-memory store.
 */
@NullMarked
package dev.distlock.autoconfigure.inmemory;

import org.jspecify.annotations.NullMarked;
