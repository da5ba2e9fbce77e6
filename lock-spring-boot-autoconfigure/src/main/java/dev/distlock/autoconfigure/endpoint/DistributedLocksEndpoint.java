package dev.distlock.autoconfigure.endpoint;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeMap;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import dev.distlock.support.DefaultLockTemplate;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.OperationResponseBody;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * {@code /actuator/distributedlocks}: the locks this JVM's callers hold (name, key,
 * holder threads, fencing token, held for, remaining lease), the threads of this JVM
 * waiting per key, the last lease losses, and the leader elections this instance takes
 * part in (role, term token, instance id).
 *
 * <p>
 * Read only, on purpose: there is no operation to force a lock free. Deleting a lock
 * whose holder is still running lets a second holder in while the first goes on writing,
 * which is exactly what the lock is there to prevent; only a store that checks fencing
 * tokens on every write could survive it. A lock whose holder died frees itself when its
 * lease runs out.
 *
 * <p>
 * Keys may be personal data (an order or customer id), so they are shown only as
 * {@code management.endpoint.distributedlocks.show-values} allows, as Spring Boot does
 * for other sensitive values; otherwise each key reads {@code ******}.
 */
@Endpoint(id = "distributedlocks")
public class DistributedLocksEndpoint {

	static final String MASK = "******";

	private final DefaultLockTemplate template;

	private final RecentLockLosses losses;

	private final Show showValues;

	private final Set<String> roles;

	private final @Nullable LeaderElections elections;

	public DistributedLocksEndpoint(DefaultLockTemplate template, RecentLockLosses losses, Show showValues,
			Set<String> roles) {
		this(template, losses, showValues, roles, null);
	}

	/**
	 * @param elections this instance's leader elections, or null for none
	 */
	public DistributedLocksEndpoint(DefaultLockTemplate template, RecentLockLosses losses, Show showValues,
			Set<String> roles, @Nullable LeaderElections elections) {
		this.elections = elections;
		this.template = template;
		this.losses = losses;
		this.showValues = showValues;
		this.roles = roles;
	}

	@ReadOperation
	public LocksDescriptor locks(SecurityContext securityContext) {
		boolean show = this.showValues.isShown(securityContext, this.roles);
		List<HeldDescriptor> held = new ArrayList<>();
		for (DefaultLockTemplate.HeldLock lock : this.template.heldLockDetails()) {
			held.add(
					new HeldDescriptor(lock.name(), show ? lock.key() : MASK, lock.fencingToken(), lock.holderThreads(),
							lock.heldFor().toMillis(), lock.remainingLease().toMillis(), lock.leaseTime().toMillis()));
		}
		held.sort((a, b) -> Long.compare(b.heldForMillis(), a.heldForMillis()));
		Map<String, Integer> waiting = new TreeMap<>();
		int masked = 0;
		for (Map.Entry<String, Integer> entry : this.template.waitingThreads().entrySet()) {
			waiting.put(show ? entry.getKey() : MASK + "#" + (++masked), entry.getValue());
		}
		List<LossDescriptor> lost = new ArrayList<>();
		for (RecentLockLosses.Loss loss : this.losses.losses()) {
			lost.add(new LossDescriptor(show ? loss.key() : MASK, loss.fencingToken(), loss.holderThread(),
					loss.reason(), loss.at().toString()));
		}
		return new LocksDescriptor(this.template.storeName(), held, waiting, lost, leaders());
	}

	private List<LeaderDescriptor> leaders() {
		List<LeaderDescriptor> leaders = new ArrayList<>();
		if (this.elections != null) {
			for (LeaderElection election : this.elections.elections()) {
				OptionalLong token = election.currentToken();
				leaders.add(new LeaderDescriptor(election.name(), election.instanceId(), token.isPresent(),
						token.isPresent() ? token.getAsLong() : null));
			}
			leaders.sort(Comparator.comparing(LeaderDescriptor::election));
		}
		return leaders;
	}

	/**
	 * The endpoint's answer.
	 *
	 * @param store the store's name
	 * @param held the locks held now, longest held first
	 * @param waitingThreads per key, the threads of this JVM acquiring or waiting
	 * @param recentLosses the last lease losses, newest first
	 * @param leaderElections the leader elections this instance takes part in, by name
	 */
	public record LocksDescriptor(String store, List<HeldDescriptor> held, Map<String, Integer> waitingThreads,
			List<LossDescriptor> recentLosses,
			List<LeaderDescriptor> leaderElections) implements OperationResponseBody {
	}

	/**
	 * This instance in one leader election.
	 *
	 * @param election the election's name
	 * @param instanceId this instance's id
	 * @param leader whether it leads now
	 * @param termToken the current term's fencing token while it leads, else null
	 */
	public record LeaderDescriptor(String election, String instanceId, boolean leader, @Nullable Long termToken) {
	}

	/**
	 * One lock held now.
	 *
	 * @param name the lock's name, or null
	 * @param key the key, or {@code ******} unless values are shown
	 * @param fencingToken the lease's fencing token
	 * @param holderThreads the threads running it
	 * @param heldForMillis since the acquire was sent
	 * @param remainingLeaseMillis until this JVM counts the lease lost unless a renewal
	 * is confirmed
	 * @param leaseTimeMillis the lease time it was taken with
	 */
	public record HeldDescriptor(@Nullable String name, String key, long fencingToken, List<String> holderThreads,
			long heldForMillis, long remainingLeaseMillis, long leaseTimeMillis) {
	}

	/**
	 * One lease loss.
	 *
	 * @param key the key, or {@code ******} unless values are shown
	 * @param fencingToken the lost lease's token: writes fenced with it are suspect
	 * @param holderThread the thread that held it
	 * @param reason why it is known lost
	 * @param at when, ISO-8601
	 */
	public record LossDescriptor(String key, long fencingToken, String holderThread, String reason, String at) {
	}

}
