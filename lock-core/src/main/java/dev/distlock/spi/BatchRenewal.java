package dev.distlock.spi;

import java.time.Duration;
import java.util.List;

/**
 * A store that renews many held locks in a few round trips. Stores without it have their
 * handles renewed one by one.
 */
public interface BatchRenewal extends LockProvider {

	/**
	 * Renews several held locks and reports the outcome of each handle to {@code results}
	 * before returning, on the calling thread. A store failure is reported for the
	 * handles it concerns only: locks kept elsewhere (another cluster master, say) are
	 * renewed all the same.
	 * @param handles handles of this provider
	 * @param leaseTimes the new lease of each handle, in the same order
	 * @param results told, for each index, whether that lock was renewed ({@code false}:
	 * expired or another owner's) or why the store could not say
	 */
	void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results);

	/** Where {@link #renewAll} reports the outcome of each handle. */
	interface RenewalResults {

		/** The store answered for handle {@code index}: renewed, or no longer ours. */
		void renewed(int index, boolean renewed);

		/** The store failed, or did not answer in time, for handle {@code index}. */
		void failed(int index, RuntimeException failure);

	}

}
