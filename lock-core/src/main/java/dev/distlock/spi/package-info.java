/**
 * The provider SPI: one attempt at a lock returns a handle; waiting, renewal and
 * reentrancy live elsewhere.
 */
@NullMarked
package dev.distlock.spi;

import org.jspecify.annotations.NullMarked;
