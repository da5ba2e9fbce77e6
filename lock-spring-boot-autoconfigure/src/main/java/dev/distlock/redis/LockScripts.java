package dev.distlock.redis;

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
	 * The token is the counter plus one, raised to the server's clock in microseconds
	 * when the counter is behind it. One counter serves a whole slot (one key on a
	 * standalone server), so memory does not grow with the number of lock names; the
	 * clock floor keeps tokens rising even if the counter is lost (a restart without
	 * persistence, an eviction), so a fenced store never rejects a new holder forever.
	 */
	static final RedisScript<Long> ACQUIRE = RedisScript.of("""
			if redis.call('exists', KEYS[1]) == 1 then
			  return -1 - math.max(redis.call('pttl', KEYS[1]), 0)
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

	/** KEYS[1] lock; ARGV[1] owner. Returns 1 if deleted, 0 if not ours. */
	static final RedisScript<Long> RELEASE = RedisScript.of("""
			if redis.call('hget', KEYS[1], 'owner') == ARGV[1] then
			  redis.call('del', KEYS[1])
			  return 1
			end
			return 0
			""", Long.class);

}
