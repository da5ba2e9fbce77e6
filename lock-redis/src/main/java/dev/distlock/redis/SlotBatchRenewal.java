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
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Renews many held locks, of every kind that has a batch renewal script (plain locks,
 * read holds, permits), with one script call per kind, per cluster slot (a standalone
 * server is one slot) and per {@value #RENEW_BATCH} locks.
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
	 * All calls are sent under one deadline before any reply is awaited, and each call's
	 * outcome is reported as it comes, so a master that hangs or fails costs only the
	 * locks it holds.
	 * @param handles handles that implement {@link Renewable}
	 */
	void renewAll(List<LockHandle> handles, List<Duration> leaseTimes, RenewalResults results) {
		Map<Batch, List<Integer>> batches = new LinkedHashMap<>();
		for (int i = 0; i < handles.size(); i++) {
			Renewable handle = (Renewable) handles.get(i);
			int slot = this.keys.isCluster() ? ClusterSlotHashUtil.calculateSlot(handle.redisKey()) : 0;
			batches.computeIfAbsent(new Batch(handle.renewAllScript(), slot), (b) -> new ArrayList<>()).add(i);
		}
		long deadline = this.calls.deadline();
		List<List<Integer>> chunks = new ArrayList<>();
		List<CompletableFuture<List<Object>>> replies = new ArrayList<>();
		for (Map.Entry<Batch, List<Integer>> batch : batches.entrySet()) {
			List<Integer> indexes = batch.getValue();
			for (int from = 0; from < indexes.size(); from += RENEW_BATCH) {
				List<Integer> chunk = indexes.subList(from, Math.min(indexes.size(), from + RENEW_BATCH));
				chunks.add(chunk);
				replies.add(send(batch.getKey().script(), handles, leaseTimes, chunk, deadline));
			}
		}
		reportAsAnswered(handles, chunks, replies, deadline, results);
	}

	private CompletableFuture<List<Object>> send(RedisScript<?> script, List<LockHandle> handles,
			List<Duration> leaseTimes, List<Integer> chunk, long deadline) {
		byte[][] lockKeys = new byte[chunk.size()][];
		List<byte[]> args = new ArrayList<>();
		for (int j = 0; j < chunk.size(); j++) {
			Renewable handle = (Renewable) handles.get(chunk.get(j));
			lockKeys[j] = RedisCalls.bytes(handle.redisKey());
			for (String arg : handle.renewArgs(leaseTimes.get(chunk.get(j)))) {
				args.add(RedisCalls.bytes(arg));
			}
		}
		try {
			return this.calls.send(handles.get(chunk.get(0)).key(), "renew", script, ScriptOutputType.MULTI, deadline,
					lockKeys, args.toArray(byte[][]::new));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Reports each call's outcome as its reply comes, so a hung master does not hold back
	 * the renewals that other masters have already confirmed; what has not answered by
	 * the deadline is reported failed.
	 */
	private void reportAsAnswered(List<LockHandle> handles, List<List<Integer>> chunks,
			List<CompletableFuture<List<Object>>> replies, long deadline, RenewalResults results) {
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

	/** Locks renewed by one script call: those of one script in one slot. */
	private record Batch(RedisScript<?> script, int slot) {

	}

	/**
	 * A held lock that a batch renewal script renews: the script takes the locks' Redis
	 * keys as its keys and each lock's arguments in turn, and answers 1 (renewed) or 0
	 * (not this owner's any more) per lock.
	 */
	interface Renewable extends LockHandle {

		/** The Redis key renewed, which selects the cluster slot. */
		String redisKey();

		/** The batch renewal script of this kind of lock. */
		RedisScript<?> renewAllScript();

		/**
		 * This lock's arguments to {@link #renewAllScript()} for a lease of
		 * {@code leaseTime}.
		 */
		String[] renewArgs(Duration leaseTime);

	}

}
