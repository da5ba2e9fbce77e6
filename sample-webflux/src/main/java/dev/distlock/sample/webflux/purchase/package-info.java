/**
 * Purchases of a SKU's last items through reactive endpoints, with and without
 * {@link dev.distlock.DistributedLock}.
 */
@NullMarked
package dev.distlock.sample.webflux.purchase;

import org.jspecify.annotations.NullMarked;
