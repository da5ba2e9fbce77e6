/**
 * Auto-configuration of leader elections on the configured lock store.
 */
@NullMarked
package dev.distlock.autoconfigure.leader;

import org.jspecify.annotations.NullMarked;
