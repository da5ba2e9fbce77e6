/**
 * Auto-configuration of distlock and its {@code distributed-lock.*} properties.
 */
@NullMarked
package dev.distlock.autoconfigure;

import org.jspecify.annotations.NullMarked;
