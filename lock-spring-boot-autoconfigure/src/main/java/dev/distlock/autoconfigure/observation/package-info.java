/**
 * Micrometer Observation of distributed locks: one observation per acquisition, one per
 * hold, their conventions and documentation; auto-configured when Micrometer's
 * {@code ObservationRegistry} is there.
 */
@NullMarked
package dev.distlock.autoconfigure.observation;

import org.jspecify.annotations.NullMarked;
