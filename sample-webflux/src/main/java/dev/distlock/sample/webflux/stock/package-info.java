/**
 * The stock of each SKU, read and written without blocking, in Redis or in memory.
 */
@NullMarked
package dev.distlock.sample.webflux.stock;

import org.jspecify.annotations.NullMarked;
