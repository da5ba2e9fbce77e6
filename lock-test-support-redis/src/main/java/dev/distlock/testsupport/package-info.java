/**
 * Real {@code redis-server} processes on free loopback ports, for tests and the sample
 * app's embedded mode.
 */
package dev.distlock.testsupport;
