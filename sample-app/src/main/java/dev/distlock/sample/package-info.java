/**
 * The distlock sample: an order service that must never sell more stock than it has,
 * across instances.
 */
@NullMarked
package dev.distlock.sample;

import org.jspecify.annotations.NullMarked;
