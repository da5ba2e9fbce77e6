/**
 * The read-only Actuator endpoint {@code distributedlocks}: what this JVM holds and waits
 * for, and its last lease losses.
 */
@NullMarked
package dev.distlock.autoconfigure.endpoint;

import org.jspecify.annotations.NullMarked;
