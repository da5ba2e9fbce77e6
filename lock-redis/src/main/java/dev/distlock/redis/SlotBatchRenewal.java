package dev.distlock.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import dev.distlock.spi.BatchRenewal.RenewalResults;
import dev.distlock.spi.LockHandle;
import io.lettuce.core.ScriptOutputType;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * Renews many held locks with one script call per cluster slot (a standalone server is
 * one slot) and per {@value #RENEW_BATCH} locks.
 */
final class SlotBatchRenewal {

	private static final int RENEW_BATCH = 2000;

	private final RedisKeys keys;

	private final RedisCalls calls;

	SlotBatchRenewal(RedisKeys keys, RedisCalls calls) {
		this.keys = keys;
		this.calls = calls;
	}

	/**
	 * One script call per cluster slot and per {@value #RENEW_BATCH} locks (a standalone
	 * server is one slot), all sent before any reply is awaited, so a master that hangs
	 * or fails costs only the locks it holds.
	 */
	void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		Map<Integer, List<Integer>> bySlot = new LinkedHashMap<>();
		for (int i = 0; i < handles.size(); i++) {
			RedisLockProvider.RedisLockHandle handle = (RedisLockProvider.RedisLockHandle) handles.get(i);
			int slot = this.keys.isCluster() ? ClusterSlotHashUtil.calculateSlot(handle.lockKey) : 0;
			bySlot.computeIfAbsent(slot, (s) -> new ArrayList<>()).add(i);
		}
		long deadline = this.calls.deadline();
		List<List<Integer>> chunks = new ArrayList<>();
		List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
		for (List<Integer> slot : bySlot.values()) {
			for (int from = 0; from < slot.size(); from += RENEW_BATCH) {
				List<Integer> chunk = slot.subList(from, Math.min(slot.size(), from + RENEW_BATCH));
				byte[][] lockKeys = new byte[chunk.size()][];
				byte[][] args = new byte[chunk.size() * 2][];
				for (int j = 0; j < chunk.size(); j++) {
					RedisLockProvider.RedisLockHandle handle = (RedisLockProvider.RedisLockHandle) handles
						.get(chunk.get(j));
					lockKeys[j] = RedisCalls.bytes(handle.lockKey);
					args[2 * j] = RedisCalls.bytes(handle.owner);
					args[2 * j + 1] = RedisCalls.bytes(millis(leaseTimes.get(chunk.get(j))));
				}
				chunks.add(chunk);
				try {
					replies.add(this.calls.send(handles.get(chunk.get(0)).key(), "renew", LockScripts.RENEW_ALL,
							ScriptOutputType.MULTI, deadline, lockKeys, args));
				}
				catch (RuntimeException ex) {
					replies.add(CompletableFuture.failedFuture(ex));
				}
			}
		}
		// Outcomes are reported as the replies come, so a hung master does not hold back
		// the renewals that other masters have already confirmed.
		List<Integer> pending = new ArrayList<>();
		for (int c = 0; c < chunks.size(); c++) {
			pending.add(c);
		}
		while (!pending.isEmpty()) {
			for (Iterator<Integer> it = pending.iterator(); it.hasNext();) {
				int c = it.next();
				if (replies.get(c).isDone()) {
					it.remove();
					report(handles, chunks.get(c), replies.get(c), deadline, results);
				}
			}
			if (pending.isEmpty() || deadline - System.nanoTime() <= 0) {
				break;
			}
			try {
				CompletableFuture.anyOf(pending.stream().map(replies::get).toArray(CompletableFuture[]::new))
					.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
			}
			catch (ExecutionException | TimeoutException ex) {
				// Reported per chunk below, or on the next pass.
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				break;
			}
		}
		for (int c : pending) {
			report(handles, chunks.get(c), replies.get(c), deadline, results);
		}
	}

	/** The outcome of one renewal script call, for each lock it renewed. */
	private void report(List<LockHandle> handles, List<Integer> chunk, CompletableFuture<List<Object>> reply,
			long deadline, RenewalResults results) {
		List<Object> renewed;
		try {
			renewed = this.calls.await(handles.get(chunk.get(0)).key(), "renew " + chunk.size() + " locks incl.", reply,
					deadline);
		}
		catch (RuntimeException ex) {
			for (int index : chunk) {
				results.failed(index, ex);
			}
			return;
		}
		for (int j = 0; j < chunk.size(); j++) {
			results.renewed(chunk.get(j), ((Number) renewed.get(j)).longValue() == 1);
		}
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

}
