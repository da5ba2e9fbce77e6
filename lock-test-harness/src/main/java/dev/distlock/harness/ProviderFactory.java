package dev.distlock.harness;

import java.time.Duration;
import java.util.Map;

import dev.distlock.LockBackendException;
import dev.distlock.contract.Conditions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;

/**
 * Builds a store's {@link LockProvider} from plain settings, in the test JVM or in a
 * child JVM ({@link ChildJvm}) that knows nothing but the factory's class name and the
 * settings on its command line. The fault harness ({@code dev.distlock.harness.fault})
 * and the cross-JVM tools ({@code dev.distlock.harness.fuzz}) take one per store, so that
 * every store runs the same workloads and checkers.
 *
 * <p>
 * One instance makes one provider: {@link #create} is called once, {@link #close} closes
 * the provider and whatever {@code create} opened for it (connections, pools, sessions).
 * Implementations need a public no-argument constructor. The settings are the ones the
 * test put on the command line (see {@link WorkerArgs}), such as the store's port, plus
 * those the harness adds (the fault run's lease, whether the client keeps its defaults).
 */
public interface ProviderFactory extends AutoCloseable {

	/**
	 * The key {@link #awaitAnswers} locks and releases at once; a store whose released
	 * locks leave a row or node behind ignores it in its leak check.
	 */
	String WARM_UP_KEY = "harness-warm-up";

	/**
	 * Connects to the store the settings name and returns a provider over it, as an
	 * application instance would have one: with an owner identity of its own.
	 */
	LockProvider create(Map<String, String> settings);

	/**
	 * What the provider still holds in this JVM beyond what the template tracks, counted
	 * once every holder and waiter has finished: for Redis, keys with a release
	 * subscriber. 0 when nothing leaked, and by default.
	 */
	default int leftOver() {
		return 0;
	}

	/**
	 * Waits until {@code provider} answers: one attempt at {@link #WARM_UP_KEY}, released
	 * at once if acquired, without a {@link LockBackendException}. A client may connect
	 * in the background, and a cold connection on a loaded host can take longer than one
	 * call timeout; the harness warms every provider up this way before its workload
	 * starts, so that a slow first connection is not counted as a store failure.
	 * @throws AssertionError if it does not answer within {@code timeout}
	 */
	static void awaitAnswers(LockProvider provider, Duration timeout) {
		Conditions.await("the " + provider.storeName() + " provider answers", timeout, () -> {
			try {
				if (LockAttempt.join(provider.tryLock(LockRequest.exclusive(WARM_UP_KEY,
						Duration.ofSeconds(5)))) instanceof LockAttempt.Acquired acquired) {
					acquired.handle().release();
				}
				return true;
			}
			catch (LockBackendException ex) {
				return false;
			}
		});
	}

	/** Closes the provider and everything {@link #create} opened. */
	@Override
	void close();

}
