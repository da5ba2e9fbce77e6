/**
 * Micrometer meters of distributed locks: held leases, waiting keys, pending renewals,
 * renewal round trips and leases lost by reason; auto-configured when a
 * {@code MeterRegistry} exists.
 */
@NullMarked
package dev.distlock.autoconfigure.metrics;

import org.jspecify.annotations.NullMarked;
