package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

import dev.distlock.LockBackendException;
import dev.distlock.spi.Interrupts;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import io.lettuce.core.ScriptOutputType;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * Multi-key locks on Redis: the sorted keys grouped by cluster slot (one group on a
 * standalone server), one {@link FamilyScripts#ACQUIRE_ALL} call per group, groups in
 * slot order. So keys sharing a slot (a standalone server, or keys with one hash tag)
 * cost one round trip, all or none inside Redis; keys across slots cost one per slot, and
 * a busy group releases the groups already taken before the attempt returns. Every caller
 * takes groups in the same order, so two callers cannot each hold a group the other waits
 * for. The whole attempt, its give-backs included, shares one deadline of one store
 * timeout, however many slots it spans.
 *
 * <p>
 * A call that fails or is interrupted part-way (a reply lost, a timeout) may have taken
 * the group whose reply never came: its release is sent at once without waiting, and
 * again once its acquire has run; the groups taken before it are released, owner-checked,
 * within the attempt's deadline. So no key stays held by an owner nobody knows
 * (Redisson's multi-lock leaves such keys until their lease ends: its issue #4456), and a
 * hung master costs the caller one store timeout, not one for the acquire and another for
 * its give-back.
 */
final class RedisMultiLocks {

	private static final Log logger = LogFactory.getLog(RedisMultiLocks.class);

	private final RedisLockProvider provider;

	private final RedisCalls calls;

	private final RedisKeys keys;

	RedisMultiLocks(RedisLockProvider provider, RedisCalls calls, RedisKeys keys) {
		this.provider = provider;
		this.calls = calls;
		this.keys = keys;
	}

	/**
	 * One attempt, bounded as a whole by one store timeout: every slot's call and the
	 * give-back after a busy or failed slot share one deadline.
	 */
	LockAttempt tryLockAll(List<String> userKeys, Duration leaseTime, boolean waiting) {
		String owner = this.provider.newOwner();
		long deadline = this.calls.deadline();
		List<List<String>> taken = new ArrayList<>();
		List<LockHandle> handles = new ArrayList<>(userKeys.size());
		String what = String.join(",", userKeys);
		for (List<String> group : groups(userKeys).values()) {
			List<Object> reply;
			try {
				reply = acquire(what, group, owner, leaseTime, waiting, deadline);
			}
			catch (RuntimeException ex) {
				// Taken or not, every group sent is given back: no key stays held by an
				// owner nobody knows. The group whose reply did not come is not waited
				// for: its give-back is sent now, and again once its acquire has run.
				giveBackPending(what, group, owner);
				RedisCalls.afterLateReply(ex, () -> giveBackPending(what, group, owner));
				Interrupts.setAside(() -> {
					giveBack(what, taken, owner, deadline);
					// An interrupt stopped the wait, not Redis: the reply still comes
					// within the deadline, and the give-back after it is awaited, so the
					// caller is not told "none held" while a group is.
					if (RedisCalls.awaitLateReply(ex, deadline)) {
						giveBack(what, List.of(group), owner, deadline);
					}
					return null;
				});
				throw ex;
			}
			if (((Number) reply.get(0)).longValue() != 1) {
				// Awaited even by an interrupted caller, who is told none of the keys is
				// held.
				Interrupts.setAside(() -> {
					giveBack(what, taken, owner, deadline);
					return null;
				});
				long remaining = ((Number) reply.get(1)).longValue();
				int index = ((Number) reply.get(2)).intValue() - 1;
				return new LockAttempt.Busy(Duration.ofMillis(remaining), group.get(index));
			}
			taken.add(group);
			for (int i = 0; i < group.size(); i++) {
				String key = group.get(i);
				handles.add(this.provider.handle(key, this.keys.lockKey(key), owner,
						((Number) reply.get(i + 1)).longValue()));
			}
		}
		// Handles in the caller's (sorted) order, whatever the slot order.
		List<LockHandle> ordered = new ArrayList<>(handles);
		ordered.sort((a, b) -> Integer.compare(userKeys.indexOf(a.key()), userKeys.indexOf(b.key())));
		return new LockAttempt.AcquiredAll(ordered);
	}

	/** Sorted keys by slot, slots in ascending order. */
	private Map<Integer, List<String>> groups(List<String> userKeys) {
		Map<Integer, List<String>> bySlot = new TreeMap<>();
		for (String key : userKeys) {
			int slot = this.keys.isCluster() ? RedisKeys.slotOf(this.keys.lockKey(key)) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(key);
		}
		return bySlot;
	}

	@SuppressWarnings("unchecked")
	private List<Object> acquire(String what, List<String> group, String owner, Duration leaseTime, boolean waiting,
			long deadline) {
		String[] lockKeys = new String[group.size() + 1];
		for (int i = 0; i < group.size(); i++) {
			lockKeys[i] = this.keys.lockKey(group.get(i));
		}
		lockKeys[group.size()] = this.keys.fenceKey(lockKeys[0]);
		List<Object> reply = this.calls.call(what, "acquire", FamilyScripts.ACQUIRE_ALL, ScriptOutputType.MULTI,
				deadline, RedisCalls.args(lockKeys),
				RedisCalls.args(owner, Long.toString(Math.max(1, leaseTime.toMillis())), waiting ? "1" : "0"));
		if (reply == null || reply.isEmpty()) {
			throw new LockBackendException(what, "Redis returned no reply to acquire the locks " + group,
					new IllegalStateException("empty script result"));
		}
		return reply;
	}

	/**
	 * Gives back the groups taken by one owner: sent at once, awaited until
	 * {@code deadline}. A failure, or a give-back still unanswered then, is logged; the
	 * keys then expire after their lease, or are given back when the call runs.
	 */
	private void giveBack(String what, List<List<String>> groups, String owner, long deadline) {
		List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
		for (List<String> group : groups) {
			try {
				replies.add(sendRelease(what, group, owner, deadline));
			}
			catch (RuntimeException ex) {
				replies.add(CompletableFuture.failedFuture(ex));
			}
		}
		for (int i = 0; i < groups.size(); i++) {
			try {
				this.calls.await(what, "release", replies.get(i), deadline);
			}
			catch (RuntimeException ex) {
				logger.debug(
						"Could not give back the locks " + groups.get(i) + " of a failed multi-key acquire"
								+ " in time; they are given back when Redis runs the call, or expire after their lease",
						ex);
			}
		}
	}

	/**
	 * Gives back a group whose acquire has not answered, without waiting (it also runs on
	 * a client I/O thread, after the late reply), and logged if it fails, the keys then
	 * expiring after their lease.
	 */
	private void giveBackPending(String what, List<String> group, String owner) {
		try {
			sendRelease(what, group, owner, System.nanoTime()).whenComplete((result, failure) -> {
				if (failure != null) {
					logger.debug("Could not give back the locks " + group + " of a failed multi-key acquire;"
							+ " they expire after their lease", failure);
				}
			});
		}
		catch (RuntimeException ex) {
			logger.debug("Could not give back the locks " + group + " of a failed multi-key acquire;"
					+ " they expire after their lease", ex);
		}
	}

	/** Releases handles of this provider, one call per slot. */
	List<Boolean> releaseAll(List<LockHandle> handles) {
		List<Boolean> released = new ArrayList<>(handles.size());
		Map<String, List<Integer>> bySlot = new TreeMap<>();
		for (int i = 0; i < handles.size(); i++) {
			released.add(false);
			RedisLockHandle handle = (RedisLockHandle) handles.get(i);
			int slot = this.keys.isCluster() ? RedisKeys.slotOf(handle.lockKey) : 0;
			bySlot.computeIfAbsent(slot + "|" + handle.owner, (s) -> new ArrayList<>()).add(i);
		}
		RuntimeException failure = null;
		for (List<Integer> group : bySlot.values()) {
			List<String> groupKeys = group.stream().map((i) -> handles.get(i).key()).toList();
			String owner = ((RedisLockHandle) handles.get(group.get(0))).owner;
			try {
				List<Object> reply = release(String.join(",", groupKeys), groupKeys, owner);
				for (int j = 0; j < group.size(); j++) {
					released.set(group.get(j), ((Number) reply.get(j)).longValue() == 1);
				}
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
		return released;
	}

	private List<Object> release(String what, List<String> group, String owner) {
		long deadline = this.calls.deadline();
		return this.calls.await(what, "release", sendRelease(what, group, owner, deadline), deadline);
	}

	/**
	 * The owner-checked release of one slot's group, its connection awaited until
	 * {@code deadline}.
	 */
	private CompletableFuture<List<Object>> sendRelease(String what, List<String> group, String owner, long deadline) {
		String[] lockKeys = group.stream().map(this.keys::lockKey).toArray(String[]::new);
		String[] publish = this.provider.publishArgs(lockKeys[0]);
		return this.calls.send(what, "release", FamilyScripts.RELEASE_ALL, ScriptOutputType.MULTI, deadline,
				RedisCalls.args(lockKeys), RedisCalls.args(owner, publish[0], publish[1]));
	}

}
