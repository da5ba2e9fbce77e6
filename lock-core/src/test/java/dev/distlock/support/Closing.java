package dev.distlock.support;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * What a test opened and closes when it ends (templates, their renewal schedulers,
 * elections), the last opened first. A test class holds one in a field marked
 * {@code @AutoClose}.
 */
public final class Closing implements AutoCloseable {

	private final Deque<AutoCloseable> open = new ArrayDeque<>();

	/**
	 * {@code closeable}, to be closed when the test ends, before what was added earlier.
	 */
	public <T extends AutoCloseable> T add(T closeable) {
		this.open.push(closeable);
		return closeable;
	}

	/** A renewal scheduler for a test's template, closed after it. */
	public RenewalScheduler scheduler() {
		return add(new RenewalScheduler());
	}

	@Override
	public void close() throws Exception {
		Exception failure = null;
		while (!this.open.isEmpty()) {
			try {
				this.open.pop().close();
			}
			catch (Exception ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

}
