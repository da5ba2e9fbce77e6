/**
 * The ZooKeeper store: locks as ephemeral sequential nodes over Apache Curator, the
 * session as the lease.
 */
@NullMarked
package dev.distlock.zookeeper;

import org.jspecify.annotations.NullMarked;
