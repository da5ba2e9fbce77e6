package dev.distlock.spi;

/**
 * A store that can reserve a block of fencing tokens with an acquisition, so that the JVM
 * holding a lock may pass it to its own waiting threads in memory, without a store call
 * ("lock cohorting": the store holds the global lock, the JVM is the cohort).
 *
 * <p>
 * Such a store honours {@link LockRequest#tokens()} of an {@link LockKind#EXCLUSIVE}
 * request: it takes the lock as it would for a single token and, in the same atomic step,
 * moves the key's fencing counter past a block of {@code tokens} tokens. The
 * acquisition's own token is the first of the block, and every token a later acquisition
 * gets (from any JVM) is greater than the block's last: an {@link LockAttempt.Acquired}
 * result carries a {@link TokenBlock} whose {@link TokenBlock#lastToken()} says so. A
 * store may reserve fewer tokens than asked, down to the acquisition's own (Redis does
 * when its counter is ahead of its clock): the machinery hands over only as many times as
 * the block allows, giving the next token of the block to each thread that the lock is
 * handed to locally, so every holder's token is strictly greater than the previous
 * holder's and smaller than any token another JVM can get later.
 *
 * <p>
 * A waiting writer's first attempt on a store that also offers {@link LockKind#SHARED}
 * may reserve a block too: when readers hold the key, that busy attempt records the
 * writer's intent ({@link LockRequest#waiterId()}, for
 * {@link LockRequest#queueTimeout()}) in the same store call, so that no new reader comes
 * in from the writer's first attempt on. The writer's later attempts take a single token.
 *
 * <p>
 * The store lease stays the acquisition's: renewals and the release of the local holders
 * all go through the handle of the acquisition, and the lease deadline carries over from
 * holder to holder. A store without this capability is never asked for more than one
 * token: every holder takes the lock from the store. Only plain exclusive locks are
 * handed over, never fair locks, read locks, semaphores or multi-key locks.
 *
 * <p>
 * A store whose handles report their loss ({@link LossReporting}) should not offer this
 * capability: a local holder learns of a loss from renewals and the deadline only.
 */
public interface LocalHandover extends LockProvider {

}
