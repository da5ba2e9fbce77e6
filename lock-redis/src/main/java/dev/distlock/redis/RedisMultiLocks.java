package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import dev.distlock.LockBackendException;
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
 * A call that fails part-way (a reply lost, a timeout) may have taken the group whose
 * reply never came: its release is sent at once without waiting, and again once its
 * acquire has run; the groups taken before it are released, owner-checked, within the
 * attempt's deadline. So no key stays held by an owner nobody knows (Redisson's
 * multi-lock leaves such keys until their lease ends: its issue #4456), and a hung master
 * costs the caller one store timeout, not one for the acquire and another for its
 * give-back.
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
	 * give-back after a busy or failed slot share one deadline. Answered without waiting
	 * for Redis: each slot's call is sent once the one before has answered.
	 */
	CompletableFuture<LockAttempt> tryLockAll(List<String> userKeys, Duration leaseTime, boolean waiting) {
		Attempt attempt = new Attempt(userKeys, this.provider.newOwner(), leaseTime, waiting, this.calls.deadline());
		CompletableFuture<LockAttempt> answer = new CompletableFuture<>();
		next(attempt, groups(userKeys).values().iterator(), answer);
		return answer;
	}

	/** Takes the next slot's group, or answers with every handle once none is left. */
	private void next(Attempt attempt, Iterator<List<String>> groups, CompletableFuture<LockAttempt> answer) {
		if (!groups.hasNext()) {
			// Handles in the caller's (sorted) order, whatever the slot order.
			List<LockHandle> ordered = new ArrayList<>(attempt.handles);
			ordered
				.sort((a, b) -> Integer.compare(attempt.userKeys.indexOf(a.key()), attempt.userKeys.indexOf(b.key())));
			answer.complete(new LockAttempt.AcquiredAll(ordered));
			return;
		}
		List<String> group = groups.next();
		acquire(attempt, group).whenComplete((reply, failure) -> {
			try {
				if (failure != null) {
					failed(attempt, group, unwrap(failure), answer);
				}
				else if (((Number) reply.get(0)).longValue() != 1) {
					long remaining = ((Number) reply.get(1)).longValue();
					int index = ((Number) reply.get(2)).intValue() - 1;
					// The caller is told none of the keys is held once they are not.
					giveBack(attempt.what, attempt.taken, attempt.owner, attempt.deadline)
						.whenComplete((done, ignored) -> answer
							.complete(new LockAttempt.Busy(Duration.ofMillis(remaining), group.get(index))));
				}
				else {
					attempt.taken(group, reply);
					next(attempt, groups, answer);
				}
			}
			catch (RuntimeException ex) {
				failed(attempt, group, ex, answer);
			}
		});
	}

	/**
	 * Taken or not, every group sent is given back: no key stays held by an owner nobody
	 * knows. The group whose reply did not come is not waited for: its give-back is sent
	 * now, and again once its acquire has run. The groups taken before are given back
	 * within the deadline before the caller hears of the failure.
	 */
	private void failed(Attempt attempt, List<String> group, Throwable failure, CompletableFuture<LockAttempt> answer) {
		giveBackPending(attempt.what, group, attempt.owner);
		if (failure instanceof RuntimeException runtime) {
			RedisCalls.afterLateReply(runtime, () -> giveBackPending(attempt.what, group, attempt.owner));
		}
		giveBack(attempt.what, attempt.taken, attempt.owner, attempt.deadline)
			.whenComplete((done, ignored) -> answer.completeExceptionally(failure));
	}

	private static Throwable unwrap(Throwable failure) {
		return (failure instanceof CompletionException && failure.getCause() != null) ? failure.getCause() : failure;
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

	private CompletableFuture<List<Object>> acquire(Attempt attempt, List<String> group) {
		String[] lockKeys = new String[group.size() + 1];
		for (int i = 0; i < group.size(); i++) {
			lockKeys[i] = this.keys.lockKey(group.get(i));
		}
		lockKeys[group.size()] = this.keys.fenceKey(lockKeys[0]);
		CompletableFuture<List<Object>> reply = this.calls.callAsync(attempt.what, "acquire", FamilyScripts.ACQUIRE_ALL,
				ScriptOutputType.MULTI, attempt.deadline, RedisCalls.args(lockKeys), RedisCalls.args(attempt.owner,
						Long.toString(Math.max(1, attempt.leaseTime.toMillis())), attempt.waiting ? "1" : "0"));
		return RedisCalls.answer(reply, (keysTaken) -> {
			if (keysTaken == null || keysTaken.isEmpty()) {
				throw new LockBackendException(attempt.what, "Redis returned no reply to acquire the locks " + group,
						new IllegalStateException("empty script result"));
			}
			return keysTaken;
		}, (failure) -> {
		});
	}

	/**
	 * Gives back the groups taken by one owner: sent at once, answered once every reply
	 * came, or at {@code deadline}. A failure, or a give-back still unanswered then, is
	 * logged; the keys then expire after their lease, or are given back when the call
	 * runs.
	 */
	private CompletableFuture<Void> giveBack(String what, List<List<String>> groups, String owner, long deadline) {
		CompletableFuture<?>[] replies = new CompletableFuture<?>[groups.size()];
		for (int i = 0; i < groups.size(); i++) {
			List<String> group = groups.get(i);
			CompletableFuture<List<Object>> reply;
			try {
				reply = sendRelease(what, group, owner, deadline);
			}
			catch (RuntimeException ex) {
				reply = CompletableFuture.failedFuture(ex);
			}
			replies[i] = this.calls.within(what, "release", reply, deadline).handle((released, failure) -> {
				if (failure != null) {
					logger.debug(
							"Could not give back the locks " + group + " of a failed multi-key acquire in time;"
									+ " they are given back when Redis runs the call, or expire after their lease",
							failure);
				}
				return null;
			});
		}
		return CompletableFuture.allOf(replies);
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
					RedisLockHandle handle = (RedisLockHandle) handles.get(group.get(j));
					released.set(group.get(j), handle.released(((Number) reply.get(j)).longValue()));
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

	/** The state of one multi-key attempt, touched by one continuation at a time. */
	private final class Attempt {

		final List<String> userKeys;

		final String what;

		final String owner;

		final Duration leaseTime;

		final boolean waiting;

		final long deadline;

		final List<List<String>> taken = new ArrayList<>();

		final List<LockHandle> handles;

		Attempt(List<String> userKeys, String owner, Duration leaseTime, boolean waiting, long deadline) {
			this.userKeys = userKeys;
			this.what = String.join(",", userKeys);
			this.owner = owner;
			this.leaseTime = leaseTime;
			this.waiting = waiting;
			this.deadline = deadline;
			this.handles = new ArrayList<>(userKeys.size());
		}

		void taken(List<String> group, List<Object> reply) {
			this.taken.add(group);
			for (int i = 0; i < group.size(); i++) {
				String key = group.get(i);
				this.handles.add(RedisMultiLocks.this.provider.handle(key, RedisMultiLocks.this.keys.lockKey(key),
						this.owner, ((Number) reply.get(i + 1)).longValue()));
			}
		}

	}

}
