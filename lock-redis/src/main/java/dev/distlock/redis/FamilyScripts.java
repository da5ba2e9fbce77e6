package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts of multi-key locks and countdown latches, one round trip each. The
 * multi-key scripts write and read every lock exactly as the mutex scripts of
 * {@link LockScripts} do ({@link LockScripts#WRITE_MUTEX},
 * {@link LockScripts#NEXT_TOKEN}, {@link LockScripts#MUTEX_FUNCTIONS}), so a plain lock
 * and a multi-key lock on one key exclude each other, and share one sequence of fencing
 * tokens.
 */
final class FamilyScripts {

	private FamilyScripts() {
	}

	/**
	 * KEYS[1..n] lock keys of one cluster slot, sorted; KEYS[n+1] the slot's fencing
	 * counter; ARGV[1] owner, ARGV[2] lease in ms, ARGV[3] {@code 1} if the caller waits.
	 * Takes every lock or none: each key gets the next token of the counter and is
	 * written with {@code SET NX PX}, as a plain acquire; at the first busy key the keys
	 * written so far are deleted again (within the same script, so nobody ever sees
	 * them), the busy key is marked for a release signal if the caller waits, and the
	 * reply is {@code {0, remainingMillis, index}}. Acquired: {@code {1, token1, ...,
	 * tokenN}}.
	 *
	 * <p>
	 * The same call run twice (a re-sent command) finds its own owner on the first key
	 * and returns the tokens of the first run (busy, if one of its keys has expired
	 * since: the caller then releases the others).
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> ACQUIRE_ALL = RedisScript.of(LockScripts.MUTEX_FUNCTIONS + """
			local n = #KEYS - 1
			local counter, owner, lease = KEYS[n + 1], ARGV[1], ARGV[2]
			local tokens = {1}
			local first = redis.pcall('get', KEYS[1])
			if owns(first, owner) then
			  for i = 1, n do
			    local held = redis.pcall('get', KEYS[i])
			    if not owns(held, owner) then
			      return {0, 0, i}
			    end
			    tokens[i + 1] = fence(held)
			  end
			  return tokens
			end
			for i = 1, n do
			  local lock = KEYS[i]
			""" + LockScripts.NEXT_TOKEN + "  if " + LockScripts.WRITE_MUTEX + """
			 then
			    tokens[i + 1] = token
			  else
			    for j = 1, i - 1 do
			      redis.call('del', KEYS[j])
			    end
			    local held = redis.pcall('get', lock)
			    if ARGV[3] == '1' and type(held) == 'string' and not waited(held) then
			      redis.call('append', lock, ' w')
			    end
			    local ttl = redis.call('pttl', lock)
			    if ttl == 0 then
			      ttl = 1
			    end
			    return {0, math.max(ttl, 0), i}
			  end
			end
			return tokens
			""", List.class);

	/**
	 * KEYS lock keys of one cluster slot; ARGV[1] owner, ARGV[2] release channel, ARGV[3]
	 * {@code 1} to publish sharded. Deletes every key that is still this owner's and
	 * signals those a waiter marked, as {@link LockScripts#RELEASE} does per key.
	 * Returns, per key, what {@link LockScripts#RELEASE} returns when asked to tell a
	 * marked lock: 1 if deleted, 0 if not ours, {@value LockScripts#RELEASED_UNSIGNALLED}
	 * if deleted but the signal could not be published,
	 * {@value LockScripts#RELEASED_TO_WAITERS} if deleted and signalled to a waiter that
	 * had marked it.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RELEASE_ALL = RedisScript
		.of(LockScripts.MUTEX_FUNCTIONS + LockScripts.SIGNAL_FUNCTION + """
				local released = {}
				for i, key in ipairs(KEYS) do
				  local held = redis.pcall('get', key)
				  if owns(held, ARGV[1]) then
				    redis.call('del', key)
				    released[i] = 1
				    if waited(held) then
				      released[i] = (signal(ARGV[2], ARGV[3], key) == 2) and 2 or 3
				    end
				  else
				    released[i] = 0
				  end
				end
				return released
				""", List.class);

	/**
	 * The fields of a latch, as {@link #LATCH_STATE} and the other latch scripts reply.
	 */
	private static final String LATCH_REPLY = """
			local function reply(latch)
			  local s = redis.call('hmget', latch, 'gen', 'count', 'done', 'pgen', 'popen')
			  if not s[1] then
			    return {}
			  end
			  return {tonumber(s[1]), tonumber(s[2]), tonumber(s[3]), tonumber(s[4]), tonumber(s[5])}
			end
			""";

	/**
	 * KEYS[1] latch (a hash: {@code gen, count, done, pgen, popen} and one field
	 * {@code p:<participant>} per participant counted); KEYS[2] the slot's fencing
	 * counter, whose next value is a new generation (so generations rise across expiry
	 * and across a lost counter); ARGV[1] count, ARGV[2] expiry in ms. Arms the latch if
	 * there is none, starts its expiry again, and replies its state {@code {gen, count,
	 * done, pgen, popen}}.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> LATCH_JOIN = RedisScript.of(LATCH_REPLY + """
			local counter = KEYS[2]
			if redis.call('exists', KEYS[1]) == 0 then
			""" + LockScripts.NEXT_TOKEN + """
			  redis.call('hset', KEYS[1], 'gen', string.format('%d', token), 'count', ARGV[1], 'done', 0,
			    'pgen', 0, 'popen', 0)
			end
			redis.call('pexpire', KEYS[1], ARGV[2])
			return reply(KEYS[1])
			""", List.class);

	/** KEYS[1] latch. Replies its state as {@link #LATCH_JOIN}, or an empty list. */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> LATCH_STATE = RedisScript.of(LATCH_REPLY + "return reply(KEYS[1])\n", List.class);

	/**
	 * KEYS[1] latch; ARGV[1] generation, ARGV[2] participant, ARGV[3] expiry in ms,
	 * ARGV[4] signal channel, ARGV[5] {@code 1} to publish sharded. Replies 0 counted, 1
	 * already counted, 2 already open, 3 stale (another generation, or no latch).
	 * Counting is {@code HSETNX} of the participant's field, so a re-sent call counts
	 * once; the count that opens the latch publishes its key.
	 */
	static final RedisScript<Long> LATCH_COUNT_DOWN = RedisScript.of("""
			local s = redis.call('hmget', KEYS[1], 'gen', 'count', 'done')
			if not s[1] or s[1] ~= ARGV[1] then
			  return 3
			end
			if redis.call('hexists', KEYS[1], 'p:' .. ARGV[2]) == 1 then
			  return 1
			end
			local count, done = tonumber(s[2]), tonumber(s[3])
			if done >= count then
			  return 2
			end
			redis.call('hset', KEYS[1], 'p:' .. ARGV[2], 1)
			redis.call('hincrby', KEYS[1], 'done', 1)
			redis.call('pexpire', KEYS[1], ARGV[3])
			if done + 1 >= count then
			  redis.pcall((ARGV[5] == '1') and 'spublish' or 'publish', ARGV[4], KEYS[1])
			end
			return 0
			""", Long.class);

	/**
	 * KEYS[1] latch, KEYS[2] the slot's fencing counter; ARGV[1] expected generation,
	 * ARGV[2] count, ARGV[3] expiry in ms, ARGV[4] signal channel, ARGV[5] {@code 1} to
	 * publish sharded. Arms a new generation if the current one is the expected one (or
	 * there is none), remembering the old generation and whether it opened; publishes, so
	 * that the old generation's waiters learn how it ended. Replies the state afterwards.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> LATCH_REARM = RedisScript.of(LATCH_REPLY + """
			local counter = KEYS[2]
			local s = redis.call('hmget', KEYS[1], 'gen', 'count', 'done')
			if s[1] and s[1] ~= ARGV[1] then
			  return reply(KEYS[1])
			end
			local opened = 0
			if s[1] and tonumber(s[3]) >= tonumber(s[2]) then
			  opened = 1
			end
			""" + LockScripts.NEXT_TOKEN + """
			redis.call('del', KEYS[1])
			redis.call('hset', KEYS[1], 'gen', string.format('%d', token), 'count', ARGV[2], 'done', 0,
			  'pgen', s[1] or 0, 'popen', opened)
			redis.call('pexpire', KEYS[1], ARGV[3])
			redis.pcall((ARGV[5] == '1') and 'spublish' or 'publish', ARGV[4], KEYS[1])
			return reply(KEYS[1])
			""", List.class);

}
