package dev.distlock.autoconfigure.leader;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Leader elections this instance takes part in ({@code distributed-lock.leader.*}).
 */
@ConfigurationProperties("distributed-lock.leader")
public class DistributedLockLeaderProperties {

	/**
	 * This instance's id, shown in the Actuator endpoint and the logs. Defaults to the
	 * JVM's pid@host.
	 */
	private @Nullable String instanceId;

	/**
	 * The elections by name: each is a role held as a renewed lease on the key
	 * "leader:<name>" of the lock store.
	 */
	private Map<String, Election> elections = new LinkedHashMap<>();

	public @Nullable String getInstanceId() {
		return this.instanceId;
	}

	public void setInstanceId(@Nullable String instanceId) {
		this.instanceId = instanceId;
	}

	public Map<String, Election> getElections() {
		return this.elections;
	}

	public void setElections(Map<String, Election> elections) {
		this.elections = elections;
	}

	/** One election. */
	public static class Election {

		/** Whether this instance is a candidate in the election. */
		private boolean enabled = true;

		/**
		 * How long the role outlives a leader that died: another instance can take it
		 * this long after the leader's last renewal.
		 */
		private Duration leaseTime = Duration.ofSeconds(15);

		/**
		 * How long after its last confirmed renewal the leader still counts itself
		 * leader. Must be shorter than the lease time (so a leader that cannot renew
		 * stops before another can take the role) and longer than a third of it (when the
		 * first renewal is due).
		 */
		private Duration renewDeadline = Duration.ofSeconds(10);

		/**
		 * How long a candidate waits for the role in one attempt, and pauses after the
		 * store failed.
		 */
		private Duration retryPeriod = Duration.ofSeconds(2);

		/**
		 * How long an instance that yielded the role waits before it campaigns again.
		 */
		private Duration yieldBackoff = Duration.ofSeconds(5);

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getLeaseTime() {
			return this.leaseTime;
		}

		public void setLeaseTime(Duration leaseTime) {
			this.leaseTime = leaseTime;
		}

		public Duration getRenewDeadline() {
			return this.renewDeadline;
		}

		public void setRenewDeadline(Duration renewDeadline) {
			this.renewDeadline = renewDeadline;
		}

		public Duration getRetryPeriod() {
			return this.retryPeriod;
		}

		public void setRetryPeriod(Duration retryPeriod) {
			this.retryPeriod = retryPeriod;
		}

		public Duration getYieldBackoff() {
			return this.yieldBackoff;
		}

		public void setYieldBackoff(Duration yieldBackoff) {
			this.yieldBackoff = yieldBackoff;
		}

	}

}
