/**
 * For the tests of every store and of users: the provider contract suite, condition
 * waits, the fault proxy and its log.
 */
package dev.distlock.testsupport;
