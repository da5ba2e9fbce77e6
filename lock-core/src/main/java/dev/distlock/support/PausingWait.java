package dev.distlock.support;

import java.util.concurrent.atomic.AtomicBoolean;

import org.jspecify.annotations.Nullable;

/**
 * A wait made of steps that run one at a time on a {@link WaitDriver}, holding no thread
 * between them: after a step that found nothing to take, the wait pauses until a signal,
 * its timer, or a stop, whichever comes first, and exactly one of them goes on.
 */
abstract class PausingWait {

	final WaitDriver driver;

	/** A signal came since the current step began. */
	volatile boolean signalled;

	private final Runnable next = this::step;

	/**
	 * The pause the wait is in; null while a step runs or a store call is on the wire.
	 */
	private volatile @Nullable Pause pause;

	PausingWait(WaitDriver driver) {
		this.driver = driver;
	}

	/** One step; each ends the wait, pauses, or waits for one store answer. */
	abstract void step();

	/** Something may have changed (a release, a loss): a pausing wait steps now. */
	final void signal() {
		this.signalled = true;
		Pause current = this.pause;
		if (current != null) {
			resume(current);
		}
	}

	/**
	 * Pauses for {@code nanos} at most; at once over if a signal came during the step.
	 */
	final void pause(long nanos) {
		Pause paused = new Pause();
		this.pause = paused;
		paused.timer = this.driver.schedule(() -> resume(paused), nanos);
		if (paused.resumed.get()) {
			paused.timer.cancel();
		}
		else if (this.signalled) {
			resume(paused);
		}
	}

	private void resume(Pause paused) {
		if (paused.resumed.compareAndSet(false, true)) {
			this.pause = null;
			paused.timer.cancel();
			this.driver.execute(this.next);
		}
	}

	/**
	 * Ends the current pause with no next step, for a caller that gives up.
	 * @return false, changing nothing, when the wait is not pausing (a step runs or a
	 * store call is on the wire: that step sees the caller gone)
	 */
	final boolean unpause() {
		Pause current = this.pause;
		if (current == null || !current.resumed.compareAndSet(false, true)) {
			return false;
		}
		this.pause = null;
		current.timer.cancel();
		return true;
	}

	/** One pause between steps, over once: by its timer, a signal or a stop. */
	private static final class Pause {

		final AtomicBoolean resumed = new AtomicBoolean();

		volatile WaitDriver.Timer timer = WaitDriver.Timer.NONE;

	}

}
