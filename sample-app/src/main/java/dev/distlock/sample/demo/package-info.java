/**
 * The demo page's backend: runs of the oversell demo, with and without the lock, and
 * their progress as JSON for the page to plot live.
 */
@NullMarked
package dev.distlock.sample.demo;

import org.jspecify.annotations.NullMarked;
