/**
 * Auto-configuration of the ZooKeeper store.
 */
@NullMarked
package dev.distlock.autoconfigure.zookeeper;

import org.jspecify.annotations.NullMarked;
