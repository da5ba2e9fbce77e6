/**
 * A load generator that fires concurrent orders at this instance and its peers over HTTP.
 */
@NullMarked
package dev.distlock.sample.load;

import org.jspecify.annotations.NullMarked;
