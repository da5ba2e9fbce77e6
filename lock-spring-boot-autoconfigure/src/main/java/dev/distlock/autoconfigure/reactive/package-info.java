/**
 * Auto-configuration of the reactive lock template, where Reactor is present.
 */
@NullMarked
package dev.distlock.autoconfigure.reactive;

import org.jspecify.annotations.NullMarked;
