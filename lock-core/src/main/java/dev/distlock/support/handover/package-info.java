/**
 * Local hand-over: a lock released while another thread of the same JVM waits for it
 * passes to that thread in memory, without a store call, up to a bound. The template
 * calls it through {@link dev.distlock.support.handover.Handover}; with hand-over off
 * ({@link dev.distlock.support.handover.Handover#off()}) every holder asks the store. The
 * stores know nothing of it beyond reserving token blocks
 * ({@link dev.distlock.spi.LocalHandover}). Machinery, not an API.
 */
@NullMarked
package dev.distlock.support.handover;

import org.jspecify.annotations.NullMarked;
