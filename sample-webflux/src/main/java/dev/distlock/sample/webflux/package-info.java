/**
 * A reactive sample: the last items of a SKU sold through WebFlux endpoints, with and
 * without {@link dev.distlock.DistributedLock} on a {@code Mono}-returning method.
 */
@NullMarked
package dev.distlock.sample.webflux;

import org.jspecify.annotations.NullMarked;
