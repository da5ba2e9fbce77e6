package dev.distlock.redis;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.function.LongPredicate;

import org.jspecify.annotations.Nullable;

/**
 * The replies of every master to one RedLock command, counted as they arrive: a reply
 * that {@code yes} accepts counts for the quorum, any other reply against it, and a
 * failure (an error, no connection) neither. {@link #await} returns as soon as the
 * outcome is decided, so a master that is paused or slow costs nothing once a quorum has
 * answered.
 */
final class RedLockReplies {

	private final List<RedLockMaster> masters;

	private final List<CompletableFuture<Long>> replies;

	private final LongPredicate yes;

	private final int quorum;

	private final Semaphore arrived = new Semaphore(0);

	RedLockReplies(List<RedLockMaster> masters, List<CompletableFuture<Long>> replies, int quorum, LongPredicate yes) {
		this.masters = masters;
		this.replies = replies;
		this.quorum = quorum;
		this.yes = yes;
		for (CompletableFuture<Long> reply : replies) {
			reply.whenComplete((result, failure) -> this.arrived.release());
		}
	}

	/** Which masters have answered (or failed) so far, by index. */
	boolean[] answeredNow() {
		boolean[] answered = new boolean[this.replies.size()];
		for (int i = 0; i < answered.length; i++) {
			answered[i] = this.replies.get(i).isDone();
		}
		return answered;
	}

	/**
	 * Runs {@code action} with a master's index once that master has answered (or
	 * failed), for the masters {@code skip} does not mark.
	 */
	void afterEachAnswer(boolean[] skip, IntConsumer action) {
		for (int i = 0; i < this.replies.size(); i++) {
			if (!skip[i]) {
				int index = i;
				this.replies.get(i).whenComplete((result, failure) -> action.accept(index));
			}
		}
	}

	/**
	 * Waits until a quorum said yes, until a quorum can no longer say yes, until every
	 * master answered, or until {@code deadlineNanos}, and counts the replies then.
	 */
	Tally await(long deadlineNanos) throws InterruptedException {
		while (true) {
			Tally tally = tally();
			if (tally.decided()) {
				return tally;
			}
			long left = deadlineNanos - System.nanoTime();
			if (left <= 0 || !this.arrived.tryAcquire(left, TimeUnit.NANOSECONDS)) {
				return tally();
			}
		}
	}

	private Tally tally() {
		int yesCount = 0;
		int noCount = 0;
		List<String> silent = new ArrayList<>();
		@Nullable Long[] values = new Long[this.replies.size()];
		List<String> failures = new ArrayList<>();
		List<Throwable> errors = new ArrayList<>();
		for (int i = 0; i < this.replies.size(); i++) {
			CompletableFuture<Long> reply = this.replies.get(i);
			if (!reply.isDone()) {
				silent.add(this.masters.get(i).name());
				continue;
			}
			try {
				Long value = reply.join();
				values[i] = value;
				if (value != null && this.yes.test(value)) {
					yesCount++;
				}
				else {
					noCount++;
				}
			}
			catch (CompletionException | java.util.concurrent.CancellationException ex) {
				failures.add(this.masters.get(i).name() + " (" + message(ex) + ")");
				errors.add(unwrap(ex));
			}
		}
		return new Tally(this.replies.size(), this.quorum, yesCount, noCount, silent, values, failures, errors);
	}

	private static String message(Throwable ex) {
		return String.valueOf(unwrap(ex).getMessage());
	}

	private static Throwable unwrap(Throwable ex) {
		Throwable cause = ex;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	/**
	 * The replies counted at one moment.
	 *
	 * @param silent the masters that have not answered
	 * @param values each master's reply, null while pending or failed
	 * @param failures the masters that failed, each with its error
	 * @param errors the failures' exceptions
	 */
	record Tally(int masters, int quorum, int yes, int no, List<String> silent, @Nullable Long[] values,
			List<String> failures, List<Throwable> errors) {

		/**
		 * The first master's failure (the others suppressed in it), or, when no master
		 * failed, an exception saying what the replies were.
		 */
		Throwable cause() {
			if (this.errors.isEmpty()) {
				return new IllegalStateException(describe());
			}
			Throwable first = this.errors.get(0);
			this.errors.subList(1, this.errors.size()).forEach(first::addSuppressed);
			return first;
		}

		boolean reached() {
			return this.yes >= this.quorum;
		}

		/** Too many masters said no or failed for a quorum to say yes. */
		boolean impossible() {
			return this.no + this.failures.size() > this.masters - this.quorum;
		}

		/** A quorum of masters said no: what the caller asked is definitely not so. */
		boolean refused() {
			return this.no > this.masters - this.quorum;
		}

		boolean decided() {
			return reached() || impossible() || this.silent.isEmpty();
		}

		/**
		 * Too many masters failed or did not answer for a quorum to say yes, whatever the
		 * others said.
		 */
		boolean unreachable() {
			return this.failures.size() + this.silent.size() > this.masters - this.quorum;
		}

		String describe() {
			StringBuilder text = new StringBuilder().append(this.yes)
				.append(" of ")
				.append(this.masters)
				.append(" masters agreed (a quorum is ")
				.append(this.quorum)
				.append("), ")
				.append(this.no)
				.append(" refused");
			if (!this.silent.isEmpty()) {
				text.append(", no answer in time from ").append(String.join(", ", this.silent));
			}
			if (!this.failures.isEmpty()) {
				text.append(", failed: ").append(String.join(", ", this.failures));
			}
			return text.toString();
		}

	}

}
