package dev.distlock;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import dev.distlock.support.Campaign;
import org.jspecify.annotations.Nullable;

/**
 * This instance's leader elections on one {@link LockTemplate}, by name: each is a role
 * held as a renewed lease on the key {@code leader:<name>}, on whatever store the
 * template uses. Without Spring Boot:
 *
 * <pre>
 * LeaderElections elections = new LeaderElections(template, "node-1");
 * LeaderElection reports = elections.add("reports", LeaderSettings.DEFAULTS, listener);
 * elections.start();
 * ...
 * elections.close();
 * </pre>
 *
 * With Spring Boot, the auto-configuration makes one from
 * {@code distributed-lock.leader.*}, and starts and stops it with the application.
 */
public final class LeaderElections implements AutoCloseable {

	private final LockTemplate template;

	private final String instanceId;

	private final Map<String, Campaign> elections = new ConcurrentHashMap<>();

	private volatile boolean started;

	/** Starting and closing against each other and against joining. */
	private final ReentrantLock lock = new ReentrantLock();

	/**
	 * @param instanceId this instance's id, shown to operators (for example the host and
	 * process)
	 */
	public LeaderElections(LockTemplate template, String instanceId) {
		this.template = Objects.requireNonNull(template, "template must not be null");
		this.instanceId = Objects.requireNonNull(instanceId, "instanceId must not be null");
	}

	/** An id for this process: the JVM's {@code pid@host}. */
	public static String defaultInstanceId() {
		return ManagementFactory.getRuntimeMXBean().getName();
	}

	/**
	 * Joins the election {@code name} as a candidate; campaigning starts with
	 * {@link #start()} (at once if already started).
	 * @throws IllegalStateException if this instance has already joined it
	 */
	public LeaderElection add(String name, LeaderSettings settings, LeaderListener... listeners) {
		Objects.requireNonNull(name, "name must not be null");
		if (name.isBlank()) {
			throw new IllegalArgumentException("name must not be blank");
		}
		Campaign campaign = new Campaign(this.template, name, this.instanceId, settings, List.of(listeners));
		this.lock.lock();
		try {
			if (this.elections.putIfAbsent(name, campaign) != null) {
				throw new IllegalStateException("Already a candidate in the leader election '" + name + "'");
			}
			if (this.started) {
				campaign.start();
			}
			return campaign;
		}
		finally {
			this.lock.unlock();
		}
	}

	/** The election {@code name}, or null if this instance has not joined it. */
	public @Nullable LeaderElection get(String name) {
		return this.elections.get(name);
	}

	/** Every election this instance has joined. */
	public Collection<LeaderElection> elections() {
		return new ArrayList<>(this.elections.values());
	}

	/** This instance's id. */
	public String instanceId() {
		return this.instanceId;
	}

	/** Starts campaigning in every election. */
	public void start() {
		this.lock.lock();
		try {
			this.started = true;
			this.elections.values().forEach(Campaign::start);
		}
		finally {
			this.lock.unlock();
		}
	}

	/** Whether started and not closed. */
	public boolean isRunning() {
		return this.started;
	}

	/**
	 * Stops every election: a leader is revoked ({@link LeaderListener.Reason#SHUTDOWN})
	 * and releases its role, so that another candidate can take it at once. Waits for
	 * that, at most about one lease time per election.
	 */
	@Override
	public void close() {
		this.lock.lock();
		try {
			this.started = false;
			this.elections.values().forEach(Campaign::stop);
		}
		finally {
			this.lock.unlock();
		}
	}

}
