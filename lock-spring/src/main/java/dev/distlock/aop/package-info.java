/**
 * The {@link dev.distlock.DistributedLock} advice: advisor, interceptor, annotation
 * metadata and SpEL keys.
 */
@NullMarked
package dev.distlock.aop;

import org.jspecify.annotations.NullMarked;
