package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts, one round trip each. A lock is a hash {@code {owner, fence}} with a
 * TTL. Every script checks the owner field before touching the key, so a stale holder can
 * neither renew nor delete a lock it lost.
 */
final class LockScripts {

	private LockScripts() {
	}

	/**
	 * KEYS[1] lock, KEYS[2] fencing counter (same cluster slot); ARGV[1] owner, ARGV[2]
	 * lease in ms. Returns the fencing token (&gt; 0) when acquired, or
	 * {@code -1 - remainingMillis} when busy.
	 *
	 * <p>
	 * A lock in its last millisecond reports 1 ms remaining, not 0 (which means "unknown"
	 * and makes a waiter sleep its whole retry interval).
	 *
	 * <p>
	 * The same call run twice (a client that re-sends commands whose replies a broken
	 * connection swallowed) returns the token of the first run instead of reporting the
	 * lock busy, so the acquisition is not orphaned until its lease ends.
	 *
	 * <p>
	 * The token is the counter plus one, raised to the server's clock in microseconds
	 * when the counter is behind it. One counter serves a whole slot (one key on a
	 * standalone server), so memory does not grow with the number of lock names; the
	 * clock floor keeps tokens rising even if the counter is lost (a restart without
	 * persistence, an eviction), so a fenced store never rejects a new holder forever.
	 */
	static final RedisScript<Long> ACQUIRE = RedisScript.of("""
			local holder = redis.call('hget', KEYS[1], 'owner')
			if holder == ARGV[1] then
			  return tonumber(redis.call('hget', KEYS[1], 'fence'))
			end
			if holder then
			  if ARGV[3] == '1' then
			    redis.call('hset', KEYS[1], 'waited', '1')
			  end
			  local ttl = redis.call('pttl', KEYS[1])
			  if ttl == 0 then
			    ttl = 1
			  end
			  return -1 - math.max(ttl, 0)
			end
			local token = redis.call('incr', KEYS[2])
			local now = redis.call('time')
			local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
			if token < floor then
			  token = floor
			  redis.call('set', KEYS[2], string.format('%d', token))
			end
			redis.call('hset', KEYS[1], 'owner', ARGV[1], 'fence', string.format('%d', token))
			redis.call('pexpire', KEYS[1], ARGV[2])
			return token
			""", Long.class);

	/**
	 * KEYS[1] lock; ARGV[1] owner, ARGV[2] lease in ms. Returns 1 if renewed, 0 if not
	 * ours.
	 */
	static final RedisScript<Long> RENEW = RedisScript.of("""
			if redis.call('hget', KEYS[1], 'owner') == ARGV[1] then
			  redis.call('pexpire', KEYS[1], ARGV[2])
			  return 1
			end
			return 0
			""", Long.class);

	/**
	 * Fair acquire. KEYS[1] lock, KEYS[2] fencing counter, KEYS[3] queue (sorted set of
	 * waiter ids by arrival), KEYS[4] waiter deadlines (hash), all in one slot; ARGV[1]
	 * owner, ARGV[2] lease in ms, ARGV[3] waiter id, ARGV[4] queue timeout in ms. Waiters
	 * whose deadline passed are dropped from the head of the queue first. The lock is
	 * taken only when free and this waiter is first (or nobody queues); otherwise the
	 * waiter queues and its deadline moves on. Returns as {@link #ACQUIRE}; a free lock
	 * that is another waiter's turn is busy with 0 remaining.
	 *
	 * <p>
	 * As {@link #ACQUIRE}, the same call run twice returns the token of the first run,
	 * and touches nothing else: the first run took the waiter out of the queue, and a
	 * second run that queued it again would leave its caller waiting behind its own lock.
	 */
	static final RedisScript<Long> FAIR_ACQUIRE = RedisScript.of("""
			if redis.call('hget', KEYS[1], 'owner') == ARGV[1] then
			  return tonumber(redis.call('hget', KEYS[1], 'fence'))
			end
			local now = redis.call('time')
			local micros = tonumber(now[1]) * 1000000 + tonumber(now[2])
			while true do
			  local head = redis.call('zrange', KEYS[3], 0, 0)
			  if #head == 0 or head[1] == ARGV[3] then
			    break
			  end
			  if tonumber(redis.call('hget', KEYS[4], head[1]) or '0') > micros then
			    break
			  end
			  redis.call('zrem', KEYS[3], head[1])
			  redis.call('hdel', KEYS[4], head[1])
			end
			if redis.call('exists', KEYS[1]) == 0 then
			  local head = redis.call('zrange', KEYS[3], 0, 0)
			  if #head == 0 or head[1] == ARGV[3] then
			    redis.call('zrem', KEYS[3], ARGV[3])
			    redis.call('hdel', KEYS[4], ARGV[3])
			    local token = redis.call('incr', KEYS[2])
			    if token < micros then
			      token = micros
			      redis.call('set', KEYS[2], string.format('%d', token))
			    end
			    redis.call('hset', KEYS[1], 'owner', ARGV[1], 'fence', string.format('%d', token))
			    if redis.call('zcard', KEYS[3]) > 0 then
			      redis.call('hset', KEYS[1], 'waited', '1')
			    end
			    redis.call('pexpire', KEYS[1], ARGV[2])
			    return token
			  end
			end
			if not redis.call('zscore', KEYS[3], ARGV[3]) then
			  redis.call('zadd', KEYS[3], micros, ARGV[3])
			end
			local timeout = tonumber(ARGV[4])
			redis.call('hset', KEYS[4], ARGV[3], string.format('%d', micros + timeout * 1000))
			redis.call('pexpire', KEYS[3], 2 * timeout)
			redis.call('pexpire', KEYS[4], 2 * timeout)
			if redis.call('exists', KEYS[1]) == 1 then
			  redis.call('hset', KEYS[1], 'waited', '1')
			  return -1 - math.max(redis.call('pttl', KEYS[1]), 0)
			end
			return -1
			""", Long.class);

	/**
	 * KEYS[1] lock, KEYS[2] queue, KEYS[3] waiter deadlines; ARGV[1] waiter id, ARGV[2]
	 * release channel, ARGV[3] {@code 1} to publish sharded. Removes a waiter that gave
	 * up; if the lock is free, the next waiter is told at once. A refused publish fails
	 * this script after the waiter has left, which is logged at debug level only: the
	 * place is gone either way.
	 */
	static final RedisScript<Long> LEAVE_QUEUE = RedisScript.of("""
			redis.call('zrem', KEYS[2], ARGV[1])
			redis.call('hdel', KEYS[3], ARGV[1])
			if redis.call('exists', KEYS[1]) == 0 and redis.call('zcard', KEYS[2]) > 0 then
			  redis.call((ARGV[3] == '1') and 'spublish' or 'publish', ARGV[2], KEYS[1])
			end
			return 1
			""", Long.class);

	/**
	 * KEYS[1] lock; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@code 1} to publish
	 * sharded. Returns 1 if deleted, 0 if not ours, {@value #RELEASED_UNSIGNALLED} if
	 * deleted but the signal could not be published. Publishes the lock's key only if a
	 * waiter marked it, so an uncontended release costs no message. A sharded channel
	 * must lie in the lock's slot ({@code SPUBLISH} from a script obeys the same slot
	 * rule as keys); {@code SPUBLISH} is never called on a server older than Redis 7.
	 *
	 * <p>
	 * The publish is a {@code pcall}: Redis does not roll a script back, so a publish
	 * refused after the delete (an ACL user without the right to publish to the channel)
	 * must not turn a release that happened into an error. Waiters then find the lock
	 * free at their retry interval.
	 */
	static final RedisScript<Long> RELEASE = RedisScript.of("""
			local lock = redis.call('hmget', KEYS[1], 'owner', 'waited')
			if lock[1] == ARGV[1] then
			  redis.call('del', KEYS[1])
			  if lock[2] then
			    local sent = redis.pcall((ARGV[3] == '1') and 'spublish' or 'publish', ARGV[2], KEYS[1])
			    if type(sent) == 'table' and sent.err then
			      return 2
			    end
			  end
			  return 1
			end
			return 0
			""", Long.class);

	/**
	 * What {@link #RELEASE} returns when it deleted the lock but Redis refused the
	 * {@code PUBLISH} of the release signal.
	 */
	static final long RELEASED_UNSIGNALLED = 2;

	/**
	 * KEYS lock keys (one cluster slot); ARGV an owner and a lease in ms per key.
	 * Returns, per key, 1 if renewed and 0 if not ours: one round trip for many held
	 * locks.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RENEW_ALL = RedisScript.of("""
			local renewed = {}
			for i, key in ipairs(KEYS) do
			  if redis.call('hget', key, 'owner') == ARGV[2 * i - 1] then
			    redis.call('pexpire', key, ARGV[2 * i])
			    renewed[i] = 1
			  else
			    renewed[i] = 0
			  end
			end
			return renewed
			""", List.class);

}
