package dev.distlock.jdbc;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

import dev.distlock.jdbc.dialect.JdbcLockDialect;
import dev.distlock.spi.TokenBlock;

/**
 * One acquisition of a plain lock, or of one key of a multi-key lock: its token is the
 * first of its block; renewals and the release check the owner and the row's fence, the
 * block's last token. The statements are {@link JdbcMutexes}'.
 */
final class JdbcLockHandle implements TokenBlock {

	private final JdbcMutexes mutexes;

	private final String key;

	final String owner;

	private final long token;

	/** The row's fence while this acquisition holds it: the block's last token. */
	final long fence;

	private volatile boolean releasedToWaiters;

	JdbcLockHandle(JdbcMutexes mutexes, String key, String owner, long token, long fence) {
		this.mutexes = mutexes;
		this.key = key;
		this.owner = owner;
		this.token = token;
		this.fence = fence;
	}

	@Override
	public String key() {
		return this.key;
	}

	@Override
	public long fencingToken() {
		return this.token;
	}

	@Override
	public long lastToken() {
		return this.fence;
	}

	/** From the release statement: whether a waiter had marked the row. */
	@Override
	public boolean releasedToWaiters() {
		return this.releasedToWaiters;
	}

	@Override
	public boolean renew(Duration leaseTime) {
		return this.mutexes.renew(this, leaseTime);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * One statement, re-run on another connection when one turns out dead. A re-run that
	 * finds the lock free with its fence still this acquisition's (nobody took it since:
	 * every acquisition raises the fence) counts the earlier run as the release, whose
	 * reply was lost, rather than report a loss.
	 */
	@Override
	public boolean release() {
		return released(this.mutexes.release(this));
	}

	/** Records what this acquisition's release found, here or in a release of many. */
	boolean released(JdbcLockDialect.Release release) {
		this.releasedToWaiters = (release == JdbcLockDialect.Release.RELEASED_TO_WAITERS);
		return release.released();
	}

	/**
	 * {@link #release()} on one of the store's workers, over a connection of its own, so
	 * that the keys of a multi-key lock are released at once rather than in turn.
	 */
	@Override
	public CompletionStage<Boolean> releaseAsync(Executor executor) {
		return this.mutexes.calls().onAWorker(this::release);
	}

	/**
	 * One query: whether the row still has this acquisition's owner and fence, and its
	 * lease has not run out; bounded by the store timeout as every call.
	 */
	@Override
	public boolean stillHeld() {
		return this.mutexes.stillHeld(this);
	}

	@Override
	public String toString() {
		return "JdbcLockHandle[" + this.key + ", owner=" + this.owner + ", token=" + this.token
				+ ((this.fence != this.token) ? ".." + this.fence : "") + "]";
	}

}
