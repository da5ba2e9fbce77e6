/**
 * Real {@code redis-server} processes on free loopback ports, for the project's tests and
 * the sample app's embedded mode, and the harness's resources kept on one.
 */
package dev.distlock.harness.redis;
