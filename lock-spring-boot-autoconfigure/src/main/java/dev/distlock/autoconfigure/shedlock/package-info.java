/**
 * Auto-configuration of the ShedLock bridge: ShedLock's lock provider on the
 * application's distlock store.
 */
@NullMarked
package dev.distlock.autoconfigure.shedlock;

import org.jspecify.annotations.NullMarked;
