package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of read-write locks and semaphores, one round trip each. Time is always
 * the server's ({@code TIME}), never a client's.
 *
 * <p>
 * <b>Read-write lock.</b> The writer's side is the mutex itself, in its own format (see
 * {@link LockScripts}): a string at the lock key. Readers are a <em>hash</em> at the same
 * key, field owner token, value {@code <expiry ms> <fence>} on the server's clock, so the
 * mutex's {@code SET NX} fails while readers hold the key, and a read finds a string (a
 * writer) busy. The hash's TTL is the latest reader's expiry; each reader's own expiry is
 * enforced by every script that touches the hash, so a dead reader's hold ends at its own
 * lease, whatever the others do. Field {@code #w} marks that a writer waits: the last
 * reader's release then publishes. Waiting writers record an intent in a sorted set
 * ({@link RedisKeys#intentsKey}: waiter id, scored by when it lapses); a read finds the
 * key busy while a live intent is there (writer preference), and marks the set with
 * {@code #r} (score 0) so that the writer that takes the key writes its mutex marked, and
 * a withdrawn last intent publishes.
 *
 * <p>
 * <b>Semaphore.</b> A sorted set ({@link RedisKeys#permitsKey}): member owner token,
 * score its expiry in ms on the server's clock; {@code #n} scored minus the permit count,
 * {@code #w} (score -1) marks a waiter. Expired permits are dropped by every acquire
 * before it counts, so a dead holder's permit comes back at its own expiry. The key's TTL
 * covers the latest permit's expiry; the last release deletes it.
 */
final class RwSemaphoreScripts {

	private RwSemaphoreScripts() {
	}

	/** {@code ms}: the server's clock in milliseconds. */
	private static final String NOW = """
			local clock = redis.call('time')
			local ms = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
			""";

	/**
	 * {@code prune(lock, ms)}: drops expired read holds of the readers' hash, returns the
	 * live readers and the latest live expiry.
	 */
	private static final String PRUNE_READERS = """
			local function prune(lock, ms)
			  local all = redis.call('hgetall', lock)
			  local live, latest = 0, 0
			  for i = 1, #all, 2 do
			    if string.sub(all[i], 1, 1) ~= '#' then
			      local expiry = tonumber(string.match(all[i + 1], '^(%d+)'))
			      if expiry <= ms then
			        redis.call('hdel', lock, all[i])
			      else
			        live = live + 1
			        if expiry > latest then
			          latest = expiry
			        end
			      end
			    end
			  end
			  return live, latest
			end
			""";

	/**
	 * {@code record_intent(lock, intents, waiter, timeout, ms)}: writer {@code waiter}
	 * waits behind the readers' hash at {@code lock}. Records (or refreshes) its intent
	 * in {@code intents} until {@code ms + timeout} (the server's clock plus the intent
	 * timeout, in ms), keeps the set for twice the timeout, and marks the hash so that
	 * the last reader's release is published. Shared by {@link #WRITE_ACQUIRE} and the
	 * mutex's block-reserving first attempt ({@link LockScripts#ACQUIRE}), so that both
	 * record the same intent.
	 */
	static final String RECORD_INTENT = """
			local function record_intent(lock, intents, waiter, timeout, ms)
			  redis.call('zadd', intents, ms + timeout, waiter)
			  if redis.call('pttl', intents) < 2 * timeout then
			    redis.call('pexpire', intents, 2 * timeout)
			  end
			  redis.call('hset', lock, '#w', '1')
			end
			""";

	/**
	 * KEYS[1] lock, KEYS[2] fencing counter, KEYS[3] intents; ARGV[1] owner, ARGV[2]
	 * lease in ms, ARGV[3] {@code 1} if the caller waits. Returns the read hold's fencing
	 * token, or {@code -1 - remainingMillis} when a writer holds the key (its lease) or a
	 * writer's intent is recorded (until it lapses). A waiting reader marks what holds it
	 * back, so that its end is published. The same call run twice returns the first run's
	 * token.
	 */
	static final RedisScript<Long> READ_ACQUIRE = RedisScript.of(LockScripts.MUTEX_FUNCTIONS + NOW + """
			local lock, counter, intents, owner, lease = KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2])
			local held = redis.pcall('get', lock)
			if type(held) == 'string' then
			  if ARGV[3] == '1' and not waited(held) then
			    redis.call('append', lock, ' w')
			  end
			  return -1 - math.max(redis.call('pttl', lock), 1)
			end
			if held then
			  local mine = redis.call('hget', lock, owner)
			  if mine then
			    return tonumber(string.match(mine, ' (%d+)$'))
			  end
			end
			local first = redis.call('zrangebyscore', intents, '(' .. ms, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
			if #first > 0 then
			  if ARGV[3] == '1' then
			    redis.call('zadd', intents, 0, '#r')
			  end
			  return -1 - math.max(tonumber(first[2]) - ms, 1)
			end
			""" + LockScripts.NEXT_TOKEN + """
			redis.call('hset', lock, owner, string.format('%d %d', ms + lease, token))
			if not held or redis.call('pttl', lock) < lease then
			  redis.call('pexpire', lock, lease)
			end
			return token
			""", Long.class);

	/**
	 * The writer's side for a writer that waits. KEYS[1] lock, KEYS[2] fencing counter,
	 * KEYS[3] intents; ARGV[1] owner, ARGV[2] lease in ms, ARGV[3] waiter id, ARGV[4]
	 * intent timeout in ms, ARGV[5] {@code 1} if an earlier attempt of this waiter was
	 * busy. Takes a free key exactly as {@link LockScripts#ACQUIRE} does (its token, then
	 * {@link LockScripts#WRITE_MUTEX}: {@code INCR} and {@code SET NX}, nothing more for
	 * a first attempt); after a busy attempt it also ends this writer's intent and writes
	 * the mutex marked when readers wait behind it. Busy behind another writer, it marks
	 * the mutex as {@code ACQUIRE} does, and nothing more: that release is signalled
	 * anyway. Busy behind readers, it drops their expired holds (taking the key if none
	 * is left), else records or refreshes the intent, so that no new reader comes in, and
	 * marks the readers' hash, so that the last reader's release is published. Returns as
	 * {@link LockScripts#ACQUIRE}. ARGV[6] (optional) the size of the token block to
	 * reserve for local hand-over, as {@link LockScripts#ACQUIRE}'s ARGV[4]: a busy
	 * attempt puts the counter back to its single token.
	 */
	static final RedisScript<Long> WRITE_ACQUIRE = RedisScript.of(LockScripts.MUTEX_FUNCTIONS + PRUNE_READERS + """
			local lock, counter, intents, owner, lease = KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2]
			local function taken()
			  if ARGV[5] == '1' then
			    redis.call('zrem', intents, ARGV[3])
			    if redis.call('zscore', intents, '#r') then
			      redis.call('zrem', intents, '#r')
			      redis.call('append', lock, ' w')
			    end
			  end
			end
			""" + RECORD_INTENT + LockScripts.nextTokenBlock("ARGV[6]") + """
			local function busy()
			  if block > 1 then
			    redis.call('set', counter, string.format('%d', token))
			  end
			  return -1 - math.max(redis.call('pttl', lock), 1)
			end
			""" + "if " + LockScripts.WRITE_MUTEX + """
			 then
			  taken()
			  return granted(token)
			end
			local held = redis.pcall('get', lock)
			if owns(held, owner) then
			  return granted_again(fence(held))
			end
			if type(held) == 'string' then
			  if not waited(held) then
			    redis.call('append', lock, ' w')
			  end
			  return busy()
			end
			""" + NOW + """
			if prune(lock, ms) == 0 then
			  redis.call('del', lock)
			""" + "  if " + LockScripts.WRITE_MUTEX + """
			 then
			    taken()
			    return granted(token)
			  end
			end
			record_intent(lock, intents, ARGV[3], tonumber(ARGV[4]), ms)
			return busy()
			""", Long.class);

	/**
	 * KEYS[1] lock, KEYS[2] intents; ARGV[1] waiter id, ARGV[2] release channel, ARGV[3]
	 * {@code 1} to publish sharded. Ends a writer's intent; when it was the last one and
	 * readers wait behind it while no writer holds the key, publishes the lock's key.
	 */
	static final RedisScript<Long> WITHDRAW_INTENT = RedisScript.of(LockScripts.SIGNAL_FUNCTION + NOW + """
			redis.call('zrem', KEYS[2], ARGV[1])
			redis.call('zremrangebyscore', KEYS[2], 1, ms)
			if redis.call('zcount', KEYS[2], 1, '+inf') == 0 and redis.call('zscore', KEYS[2], '#r') then
			  redis.call('del', KEYS[2])
			  if type(redis.pcall('get', KEYS[1])) ~= 'string' then
			    return signal(ARGV[2], ARGV[3], KEYS[1])
			  end
			end
			return 1
			""", Long.class);

	/**
	 * KEYS[1] lock; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@code 1} to publish
	 * sharded. Ends a read hold: 1 if it was held, 0 if it was not (released, expired, or
	 * never ours), {@link LockScripts#RELEASED_UNSIGNALLED} if released but the signal
	 * was refused. The last reader's release deletes the hash and, if a writer marked it,
	 * publishes the lock's key; otherwise the hash's TTL shrinks to the latest live
	 * reader's.
	 */
	static final RedisScript<Long> READ_RELEASE = RedisScript.of(PRUNE_READERS + LockScripts.SIGNAL_FUNCTION + NOW + """
			local mine = redis.pcall('hget', KEYS[1], ARGV[1])
			if type(mine) ~= 'string' then
			  return 0
			end
			redis.call('hdel', KEYS[1], ARGV[1])
			local result = (tonumber(string.match(mine, '^(%d+)')) > ms) and 1 or 0
			if redis.call('hlen', KEYS[1]) == 0 then
			  return result
			end
			local live, latest = prune(KEYS[1], ms)
			if live == 0 then
			  local marked = redis.call('hexists', KEYS[1], '#w') == 1
			  redis.call('del', KEYS[1])
			  if marked and signal(ARGV[2], ARGV[3], KEYS[1]) == 2 and result == 1 then
			    return 2
			  end
			else
			  redis.call('pexpire', KEYS[1], latest - ms)
			end
			return result
			""", Long.class);

	/**
	 * KEYS[1] semaphore, KEYS[2] fencing counter (same slot); ARGV[1] owner, ARGV[2]
	 * permits, ARGV[3] lease in ms, ARGV[4] {@code 1} if the caller waits. Returns
	 * {@code {1, token}} when a permit was taken, {@code {0, ms until the first permit
	 * expires}} when none is free (a waiter marks the set), {@code {2, declared permits}}
	 * when permits are held under another count.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> PERMIT_ACQUIRE = RedisScript.of(NOW + """
			local sem, counter, owner = KEYS[1], KEYS[2], ARGV[1]
			local permits, lease = tonumber(ARGV[2]), tonumber(ARGV[3])
			redis.call('zremrangebyscore', sem, 0, ms)
			local held = redis.call('zcount', sem, 0, '+inf')
			if held > 0 then
			  local declared = redis.call('zscore', sem, '#n')
			  if declared and -tonumber(declared) ~= permits then
			    return {2, -tonumber(declared)}
			  end
			end
			if held >= permits and not redis.call('zscore', sem, owner) then
			  if ARGV[4] == '1' then
			    redis.call('zadd', sem, -1, '#w')
			  end
			  local first = redis.call('zrangebyscore', sem, 0, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
			  return {0, math.max(tonumber(first[2]) - ms, 1)}
			end
			""" + LockScripts.NEXT_TOKEN + """
			redis.call('zadd', sem, ms + lease, owner, -permits, '#n')
			if held == 0 or redis.call('pttl', sem) < lease then
			  redis.call('pexpire', sem, lease)
			end
			return {1, token}
			""", List.class);

	/**
	 * KEYS[1] semaphore; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@code 1} to
	 * publish sharded. Frees a permit: 1 if it was held, 0 if not (released, expired, or
	 * never ours: nothing is freed then), {@link LockScripts#RELEASED_UNSIGNALLED} if
	 * freed but the signal was refused. Publishes the semaphore's key if a waiter marked
	 * it, and clears the mark: a waiter that finds no permit marks it again.
	 */
	static final RedisScript<Long> PERMIT_RELEASE = RedisScript.of(LockScripts.SIGNAL_FUNCTION + NOW + """
			local score = redis.call('zscore', KEYS[1], ARGV[1])
			if not score then
			  return 0
			end
			redis.call('zrem', KEYS[1], ARGV[1])
			local result = (tonumber(score) > ms) and 1 or 0
			local marked = redis.call('zscore', KEYS[1], '#w')
			if redis.call('zcount', KEYS[1], 0, '+inf') == 0 then
			  redis.call('del', KEYS[1])
			elseif marked then
			  redis.call('zrem', KEYS[1], '#w')
			end
			if marked and signal(ARGV[2], ARGV[3], KEYS[1]) == 2 and result == 1 then
			  return 2
			end
			return result
			""", Long.class);

	/**
	 * KEYS read-write lock keys and semaphore keys (one cluster slot); ARGV a kind
	 * ({@code r} a read hold, {@code p} a permit), an owner and a lease in ms per key.
	 * Returns, per key, 1 if renewed and 0 if not held (expired or released): one round
	 * trip for many read holds and permits. A hold found expired is dropped, never
	 * revived.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RENEW_ALL = RedisScript.of(NOW + """
			local renewed = {}
			for i, key in ipairs(KEYS) do
			  local kind, owner, lease = ARGV[3 * i - 2], ARGV[3 * i - 1], tonumber(ARGV[3 * i])
			  renewed[i] = 0
			  if kind == 'r' then
			    local mine = redis.pcall('hget', key, owner)
			    if type(mine) == 'string' then
			      if tonumber(string.match(mine, '^(%d+)')) > ms then
			        redis.call('hset', key, owner, string.format('%d %s', ms + lease, string.match(mine, ' (%d+)$')))
			        renewed[i] = 1
			      else
			        redis.call('hdel', key, owner)
			      end
			    end
			  else
			    local score = redis.pcall('zscore', key, owner)
			    if type(score) == 'string' then
			      if tonumber(score) > ms then
			        redis.call('zadd', key, ms + lease, owner)
			        renewed[i] = 1
			      else
			        redis.call('zrem', key, owner)
			      end
			    end
			  end
			  if renewed[i] == 1 and redis.call('pttl', key) < lease then
			    redis.call('pexpire', key, lease)
			  end
			end
			return renewed
			""", List.class);

}
