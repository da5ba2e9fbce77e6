/**
 * For the tests of applications that use distributed locks: locks in this JVM's memory on
 * a Spring Boot test ({@link dev.distlock.test.AutoConfigureInMemoryLocks}), a recorder
 * of every acquisition ({@link dev.distlock.test.LockRecorder}) and assertions from
 * inside the code under test ({@link dev.distlock.test.LockAssert}).
 */
package dev.distlock.test;
