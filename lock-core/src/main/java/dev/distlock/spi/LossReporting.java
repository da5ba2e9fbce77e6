package dev.distlock.spi;

import java.util.function.Consumer;

/**
 * A handle whose store tells it, unasked, that its lock is lost: a store whose lease is a
 * session (ZooKeeper) learns of the session's end from the client library, long before a
 * renewal would ask. The machinery registers a listener right after the acquire, and a
 * reported loss then counts at once: {@link dev.distlock.Lease#isHeld()} turns false, the
 * loss listeners hear of it, {@code on-lease-lost} applies and the release throws
 * {@link dev.distlock.LeaseLostException}, exactly as for a loss found by a renewal.
 *
 * <p>
 * A handle without this capability is found lost by its renewals and its deadline only.
 */
public interface LossReporting extends LockHandle {

	/**
	 * Registers the listener told of this acquisition's loss, with the reason. It is
	 * called at most once, on a thread of the provider's, never on the thread that
	 * registers it; a loss that happened before the registration is reported right after
	 * it. A handle that was released is never reported lost. The listener returns at once
	 * and may be called while another thread uses the handle.
	 */
	void onLoss(Consumer<String> listener);

}
