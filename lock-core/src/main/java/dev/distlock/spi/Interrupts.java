package dev.distlock.spi;

import java.util.function.IntFunction;
import java.util.function.Supplier;

/**
 * Runs a call with the current thread's interrupt flag set aside, and gives the flag back
 * afterwards. For clean-up that must reach the store even from an interrupted thread: a
 * release, the undoing of an acquire, without which a lock would block everyone for the
 * rest of its lease.
 */
public final class Interrupts {

	private Interrupts() {
	}

	/**
	 * Runs {@code call} with the interrupt flag cleared and sets it again afterwards if
	 * it was set before. A call that notices an interrupt arriving while it runs (and
	 * clears it to retry) sets the flag again before it returns, so the caller hears of
	 * it.
	 * @return what the call returned
	 */
	public static <T> T setAside(Supplier<T> call) {
		boolean interrupted = Thread.interrupted();
		try {
			return call.get();
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * As {@link #setAside}, for a call that may be asked again (it is owner-checked, or
	 * changes nothing): a call that an interrupt arriving meanwhile cut short is asked
	 * again, up to 10 attempts, and the flag is set again afterwards.
	 * @param call the call, given its attempt number (1 for the first)
	 * @return what the last attempt returned
	 */
	public static <T> T setAsideAndRetry(IntFunction<T> call) {
		return setAside(() -> {
			boolean interruptedDuringCall = false;
			try {
				for (int attempt = 1;; attempt++) {
					try {
						return call.apply(attempt);
					}
					catch (RuntimeException ex) {
						if (!Thread.interrupted() || attempt == 10) {
							throw ex;
						}
						interruptedDuringCall = true;
					}
				}
			}
			finally {
				if (interruptedDuringCall) {
					Thread.currentThread().interrupt();
				}
			}
		});
	}

}
