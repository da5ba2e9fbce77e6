package dev.distlock;

/**
 * What happens, besides the {@link LockLostEvent} and a warning in the log, when a held
 * lease is found lost while its holder still runs: the lock expired during a pause,
 * another owner took the key, or Redis stayed unreachable until the lease deadline. Set
 * per lock with {@code distributed-lock.on-lease-lost} or
 * {@code distributed-lock.locks.<name>.on-lease-lost}, or with
 * {@link LockOptions.Builder#onLeaseLost}.
 */
public enum OnLeaseLost {

	/**
	 * The default. The holder runs on; when it leaves the locked section, the annotated
	 * method or {@link LockTemplate#execute} throws {@link LeaseLostException} (or adds
	 * it as suppressed to its own exception), so that an enclosing transaction rolls
	 * back.
	 */
	FAIL_ON_EXIT,

	/**
	 * As {@link #FAIL_ON_EXIT}, and the holder thread is interrupted at once, so that
	 * interruptible work (I/O on interruptible channels, {@code Thread.sleep}, blocking
	 * queues, JDBC drivers that honour it) stops early instead of racing the new holder.
	 */
	INTERRUPT,

	/**
	 * Only the warning and the event: the annotated method or
	 * {@link LockTemplate#execute} returns normally. For work that is safe without the
	 * lock (for example work whose writes are fenced). A {@link Lease} released by hand
	 * still throws {@link LeaseLostException}.
	 */
	LOG

}
