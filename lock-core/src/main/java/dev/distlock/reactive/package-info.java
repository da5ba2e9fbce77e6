/**
 * Distributed locks for Reactor pipelines:
 * {@link dev.distlock.reactive.ReactiveLockTemplate} and
 * {@link dev.distlock.reactive.ReactiveLockContext}. Needs {@code reactor-core} on the
 * class path.
 */
@NullMarked
package dev.distlock.reactive;

import org.jspecify.annotations.NullMarked;
