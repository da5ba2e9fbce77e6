/**
 * Failure analyzers: what Spring Boot's "APPLICATION FAILED TO START" report says, and
 * what to do, when distlock stops an application at startup.
 */
@NullMarked
package dev.distlock.autoconfigure.diagnostics;

import org.jspecify.annotations.NullMarked;
