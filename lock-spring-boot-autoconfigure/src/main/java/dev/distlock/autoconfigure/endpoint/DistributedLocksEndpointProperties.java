package dev.distlock.autoconfigure.endpoint;

import java.util.HashSet;
import java.util.Set;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the {@code distributedlocks} endpoint
 * ({@code management.endpoint.distributedlocks.*}).
 */
@ConfigurationProperties("management.endpoint.distributedlocks")
public class DistributedLocksEndpointProperties {

	/**
	 * When to show lock keys, which may be personal data (an order or customer id): never
	 * (each key reads ******), always, or when-authorized (an authenticated user, in one
	 * of the roles if roles are set).
	 */
	private Show showValues = Show.NEVER;

	/**
	 * Roles that may see lock keys when show-values is when-authorized. Empty: every
	 * authenticated user.
	 */
	private Set<String> roles = new HashSet<>();

	public Show getShowValues() {
		return this.showValues;
	}

	public void setShowValues(Show showValues) {
		this.showValues = showValues;
	}

	public Set<String> getRoles() {
		return this.roles;
	}

	public void setRoles(Set<String> roles) {
		this.roles = roles;
	}

}
