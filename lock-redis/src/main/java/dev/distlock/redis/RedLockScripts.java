package dev.distlock.redis;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The scripts RedLock runs on each master, one round trip each. A RedLock lock is a hash
 * {@code {owner, fence}} with a TTL at {@code <prefix><key>}, and each master keeps its
 * own fencing counter at {@code <prefix>}; both are RedLock's own key space, whatever
 * format the plain Redis store uses. Every script compares the owner first, so a stale
 * holder can neither renew, fence nor delete a lock it lost.
 */
final class RedLockScripts {

	private RedLockScripts() {
	}

	/**
	 * KEYS[1] lock, KEYS[2] this master's fencing counter; ARGV[1] owner, ARGV[2] lease
	 * in ms. Returns this master's token (&gt; 0) when taken (or already taken by this
	 * owner), or {@code -1 - remainingMillis} when another owner holds it. The token is
	 * the counter plus one, raised to the master's clock in microseconds when the counter
	 * is behind it, so a master that lost its counter still hands out large tokens.
	 */
	static final RedisScript<Long> ACQUIRE = RedisScript.of("""
			local holder = redis.call('hget', KEYS[1], 'owner')
			if holder == ARGV[1] then
			  return tonumber(redis.call('hget', KEYS[1], 'fence'))
			end
			if holder then
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
	 * KEYS[1] lock, KEYS[2] this master's fencing counter; ARGV[1] owner, ARGV[2] the
	 * acquisition's token (the largest over its quorum). While the owner still holds the
	 * lock here, raises the counter to the token, so that whoever takes this master's
	 * lock next gets a larger one. Returns 1, or 0 if the lock is not the owner's.
	 */
	static final RedisScript<Long> FENCE = RedisScript.of("""
			if redis.call('hget', KEYS[1], 'owner') ~= ARGV[1] then
			  return 0
			end
			if tonumber(redis.call('get', KEYS[2]) or '0') < tonumber(ARGV[2]) then
			  redis.call('set', KEYS[2], ARGV[2])
			end
			redis.call('hset', KEYS[1], 'fence', ARGV[2])
			return 1
			""", Long.class);

	/** KEYS[1] lock; ARGV[1] owner, ARGV[2] lease in ms. 1 if renewed, 0 if not ours. */
	static final RedisScript<Long> RENEW = RedisScript.of("""
			if redis.call('hget', KEYS[1], 'owner') == ARGV[1] then
			  redis.call('pexpire', KEYS[1], ARGV[2])
			  return 1
			end
			return 0
			""", Long.class);

	/** KEYS[1] lock; ARGV[1] owner. 1 if deleted, 0 if not ours. */
	static final RedisScript<Long> RELEASE = RedisScript.of("""
			if redis.call('hget', KEYS[1], 'owner') == ARGV[1] then
			  redis.call('del', KEYS[1])
			  return 1
			end
			return 0
			""", Long.class);

}
