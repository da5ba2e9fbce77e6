/**
 * Orders against hot stock split into segments, each with its own lock.
 */
@NullMarked
package dev.distlock.sample.segmented;

import org.jspecify.annotations.NullMarked;
