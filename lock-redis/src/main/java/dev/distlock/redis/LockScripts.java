package dev.distlock.redis;

import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts, one round trip each.
 *
 * <p>
 * <b>The mutex key format.</b> A held lock is a Redis <em>string</em> at the lock key,
 * with the lease as its TTL, whose value is {@code <owner> <fence>}: the owner token (no
 * spaces), one space, and the fencing token in decimal. Once a waiter found it busy, the
 * value ends in {@value #WAITED_SUFFIX} (appended with {@code APPEND}, which keeps the
 * TTL), and its release publishes a signal. It is written only with
 * {@code SET key value NX PX lease} ({@link #WRITE_MUTEX}), so it is taken only when the
 * key does not exist, whatever its type. Every script reads it with a protected
 * {@code GET}: a key of another type (a read-write lock's readers, kept as a hash at the
 * same key) is busy, and never anybody's mutex to renew or delete. Every script checks
 * the owner before touching the key, so a stale holder can neither renew nor delete a
 * lock it lost.
 *
 * <p>
 * <b>Commands.</b> An uncontended acquire runs {@code TIME}, {@code SET ... GET} of the
 * counter and {@code SET NX PX} of the lock, and a release {@code GET} and {@code DEL}:
 * five commands per cycle.
 */
final class LockScripts {

	private LockScripts() {
	}

	/** What a waiter appends to a busy mutex's value: its release must signal. */
	static final String WAITED_SUFFIX = " w";

	/**
	 * Lua that takes a free mutex for an owner, exactly as {@link #ACQUIRE} does: with
	 * {@code lock} the key, {@code owner} the owner token, {@code token} the fencing
	 * token (a Lua number) and {@code lease} the lease in ms (a string or number), the
	 * expression is truthy if the key was free and is now held. For scripts that take
	 * several mutexes (a multi-key lock): they must hold every key in one slot, take the
	 * token from the slot's counter ({@link #NEXT_TOKEN}), and undo their {@code SET}s
	 * when a later key is busy.
	 */
	static final String WRITE_MUTEX = "redis.call('set', lock, owner .. ' ' .. string.format('%d', token), 'NX', 'PX', lease)";

	/**
	 * Lua that sets the local {@code token} to the next fencing token, from the server's
	 * clock in microseconds and the slot's counter {@code counter}, which holds the last
	 * token: the clock, swapped into the counter with one {@code SET ... GET}; or, when
	 * the counter is not behind the clock (two tokens in one microsecond, a clock stepped
	 * back), the counter plus one, written back. So tokens rise strictly while the
	 * counter lasts, and rise with the clock when it is lost (a restart without
	 * persistence, an eviction) or lags (a failover to a replica that missed the last
	 * writes), as far as the servers' clocks agree. Needs Redis 6.2
	 * ({@code SET ... GET}).
	 */
	static final String NEXT_TOKEN = """
			local now = redis.call('time')
			local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
			local last = tonumber(redis.call('set', counter, string.format('%d', token), 'GET') or '0')
			if last >= token then
			  token = last + 1
			  redis.call('set', counter, string.format('%d', token))
			end
			""";

	/**
	 * {@link #NEXT_TOKEN} for an acquire that reserves a block of {@code ARGV[4]} tokens
	 * (absent: one, exactly as {@link #NEXT_TOKEN}) for local hand-over: the counter is
	 * left at the block's last token, {@code token + block - 1}, in the same
	 * {@code SET ... GET}, so the block costs no command more than a single token, and
	 * every later token (from the clock or the counter) is greater than the whole block.
	 * A busy attempt puts the counter back to its single token ({@link #ACQUIRE}), so
	 * only acquisitions move it by a block. A counter found ahead of the clock (which a
	 * lost or rolled-back counter falls back to) gives a single token and no block
	 * ({@code block} is then 1, and {@code granted(token)} the reply that says so, see
	 * {@link #NO_BLOCK}): so the counter is never more than about one block ahead of the
	 * clock, however many acquisitions a slot sees (beyond about 30,000 a second with
	 * 33-token blocks, some acquisitions go without a block and hand nothing over).
	 */
	static final String NEXT_TOKEN_BLOCK = nextTokenBlock("ARGV[4]");

	/**
	 * {@link #NEXT_TOKEN_BLOCK} with the block's size in {@code blockArg} (an
	 * {@code ARGV} of the script, absent for one token).
	 */
	static String nextTokenBlock(String blockArg) {
		return "local asked = tonumber(" + blockArg + " or '1')\nlocal no_block = " + NO_BLOCK + "\n" + """
				local block = asked
				local now = redis.call('time')
				local token = tonumber(now[1]) * 1000000 + tonumber(now[2])
				local last = tonumber(redis.call('set', counter, string.format('%d', token + block - 1), 'GET') or '0')
				if last >= token then
				  token = last + 1
				  block = 1
				  redis.call('set', counter, string.format('%d', token))
				end
				local function granted(t)
				  if block < asked then
				    return -no_block - t
				  end
				  return t
				end
				local function granted_again(t)
				  if asked > 1 then
				    return -no_block - t
				  end
				  return t
				end
				""";
	}

	/**
	 * What an acquire reply (of {@link #ACQUIRE} or
	 * {@link RwSemaphoreScripts#WRITE_ACQUIRE}) below {@code -NO_BLOCK} means: the lock
	 * was taken with the single token {@code -reply - NO_BLOCK}, without the block asked
	 * for, because the counter was found ahead of the server's clock. A block then would
	 * push it further ahead, and a counter lost (a restart without persistence, an
	 * eviction) falls back to the clock, behind tokens already handed out. So the counter
	 * never runs ahead of the clock by more than one block, whatever the rate of
	 * acquisitions. A busy reply, {@code -1 - remainingMillis}, stays above it for any
	 * lease under 34 years; tokens (microseconds since 1970) stay within Lua's exact
	 * integers even so until the year 2255.
	 */
	static final long NO_BLOCK = 1L << 40;

	/**
	 * The fencing token an acquire reply grants, or 0 if it reports the lock busy.
	 */
	static long grantedToken(long reply) {
		if (reply > 0) {
			return reply;
		}
		return (reply < -NO_BLOCK) ? -reply - NO_BLOCK : 0;
	}

	/**
	 * The last token of the block an acquire reply grants, for an acquisition that asked
	 * for {@code tokens}: the whole block for a positive reply, only its own token for a
	 * grant without it.
	 */
	static long grantedLastToken(long reply, int tokens) {
		return (reply > 0) ? reply + tokens - 1 : grantedToken(reply);
	}

	/**
	 * Lua functions over a mutex value {@code held} (a string, or the error table of a
	 * protected {@code GET} of a key of another type): {@code owns(held, owner)},
	 * {@code fence(held)} and {@code waited(held)}.
	 */
	static final String MUTEX_FUNCTIONS = """
			local function owns(held, owner)
			  return type(held) == 'string' and string.sub(held, 1, #owner + 1) == owner .. ' '
			end
			local function fence(held)
			  return tonumber(string.match(held, '^%S+ (%d+)'))
			end
			local function waited(held)
			  return type(held) == 'string' and string.sub(held, -2) == ' w'
			end
			""";

	/**
	 * KEYS[1] lock, KEYS[2] fencing counter (same cluster slot); ARGV[1] owner, ARGV[2]
	 * lease in ms, ARGV[3] {@code 1} if the caller waits (marks a busy lock), ARGV[4]
	 * (optional) the size of the token block to reserve for local hand-over; for the
	 * first attempt of a waiting writer ({@code LocalHandover}'s intent overload), also
	 * KEYS[3] the writers' intents ({@link RedisKeys#intentsKey}), ARGV[5] the waiter id
	 * and ARGV[6] the intent timeout in ms: busy behind readers (a hash at the lock key),
	 * the script records the writer's intent as {@link RwSemaphoreScripts#WRITE_ACQUIRE}
	 * does, with the same {@code record_intent}, at no extra call. Returns the fencing
	 * token (&gt; 0) when acquired, {@code -NO_BLOCK - token} when acquired without the
	 * block asked for (the counter was ahead of the clock, see {@link #NO_BLOCK}), or
	 * {@code -1 - remainingMillis} when busy. With a block of B &gt; 1 tokens
	 * ({@link #NEXT_TOKEN_BLOCK}), the counter is left at {@code token + B - 1}, so the
	 * tokens up to it are this acquisition's to hand out and every later acquisition's
	 * token is greater.
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
	 * The token is taken before the {@code SET NX} (see {@link #NEXT_TOKEN}); a busy
	 * attempt so uses up a token, which only leaves a gap. One counter serves a whole
	 * slot (one key on a standalone server), so memory does not grow with the number of
	 * lock names.
	 */
	static final RedisScript<Long> ACQUIRE = RedisScript.of(MUTEX_FUNCTIONS + RwSemaphoreScripts.RECORD_INTENT + """
			local lock, counter, owner, lease = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
			""" + NEXT_TOKEN_BLOCK + "if " + WRITE_MUTEX + """
			 then
			  return granted(token)
			end
			if block > 1 then
			  redis.call('set', counter, string.format('%d', token))
			end
			local held = redis.pcall('get', lock)
			if owns(held, owner) then
			  return granted_again(fence(held))
			end
			if ARGV[3] == '1' and type(held) == 'string' and not waited(held) then
			  redis.call('append', lock, ' w')
			end
			if ARGV[5] and type(held) == 'table' then
			  record_intent(lock, KEYS[3], ARGV[5], tonumber(ARGV[6]),
			    tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
			end
			local ttl = redis.call('pttl', lock)
			if ttl == 0 then
			  ttl = 1
			end
			return -1 - math.max(ttl, 0)
			""", Long.class);

	/**
	 * KEYS[1] lock; ARGV[1] owner, ARGV[2] lease in ms. Returns 1 if renewed, 0 if not
	 * ours.
	 */
	static final RedisScript<Long> RENEW = RedisScript.of(MUTEX_FUNCTIONS + """
			if owns(redis.pcall('get', KEYS[1]), ARGV[1]) then
			  redis.call('pexpire', KEYS[1], ARGV[2])
			  return 1
			end
			return 0
			""", Long.class);

	/**
	 * KEYS[1] lock; ARGV[1] owner. Returns 1 if the lock is held by this owner, 0 if not:
	 * the owner check after a local hand-over, which changes nothing.
	 */
	static final RedisScript<Long> HELD = RedisScript.of(MUTEX_FUNCTIONS + """
			if owns(redis.pcall('get', KEYS[1]), ARGV[1]) then
			  return 1
			end
			return 0
			""", Long.class);

	/**
	 * Fair acquire. KEYS[1] lock, KEYS[2] fencing counter, KEYS[3] queue (sorted set of
	 * waiter ids by arrival), KEYS[4] waiters (hash of waiter id to
	 * {@code <deadline in server micros> <lease ms> <owner>}, what a
	 * {@link #FAIR_RELEASE} needs to grant the lock to the waiter), all in one slot;
	 * ARGV[1] owner (the same for every attempt of one wait, so a granted lock is found
	 * as ours), ARGV[2] lease in ms, ARGV[3] waiter id, ARGV[4] queue timeout in ms.
	 * Waiters whose deadline passed are dropped from the head of the queue first. The
	 * lock is taken only when free and this waiter is first (or nobody queues); otherwise
	 * the waiter queues and its deadline moves on. Returns as {@link #ACQUIRE}; a free
	 * lock that is another waiter's turn is busy with 0 remaining. A lock taken while
	 * others queue is written marked, so its release signals them.
	 *
	 * <p>
	 * As {@link #ACQUIRE}, the same call run twice returns the token of the first run
	 * (and a lock granted to the owner is found the same way, its claim extended to the
	 * lease), and touches nothing else: the first run took the waiter out of the queue,
	 * and a second run that queued it again would leave its caller waiting behind its own
	 * lock.
	 */
	static final RedisScript<Long> FAIR_ACQUIRE = RedisScript.of(
			MUTEX_FUNCTIONS + """
					local lock, counter, owner, lease = KEYS[1], KEYS[2], ARGV[1], ARGV[2]
					local held = redis.pcall('get', lock)
					if owns(held, owner) then
					  redis.call('pexpire', lock, lease)
					  return fence(held)
					end
					local now = redis.call('time')
					local micros = tonumber(now[1]) * 1000000 + tonumber(now[2])
					while true do
					  local head = redis.call('zrange', KEYS[3], 0, 0)
					  if #head == 0 or head[1] == ARGV[3] then
					    break
					  end
					  if tonumber(string.match(redis.call('hget', KEYS[4], head[1]) or '0', '^%d+')) > micros then
					    break
					  end
					  redis.call('zrem', KEYS[3], head[1])
					  redis.call('hdel', KEYS[4], head[1])
					end
					if not held then
					  local head = redis.call('zrange', KEYS[3], 0, 0)
					  if #head == 0 or head[1] == ARGV[3] then
					    redis.call('zrem', KEYS[3], ARGV[3])
					    redis.call('hdel', KEYS[4], ARGV[3])
					""" + NEXT_TOKEN
					+ """
							    if redis.call('zcard', KEYS[3]) > 0 then
							      redis.call('set', lock, ARGV[1] .. ' ' .. string.format('%d', token) .. ' w', 'PX', lease)
							    else
							      redis.call('set', lock, ARGV[1] .. ' ' .. string.format('%d', token), 'PX', lease)
							    end
							    return token
							  end
							end
							if not redis.call('zscore', KEYS[3], ARGV[3]) then
							  redis.call('zadd', KEYS[3], micros, ARGV[3])
							end
							local timeout = tonumber(ARGV[4])
							redis.call('hset', KEYS[4], ARGV[3], string.format('%d', micros + timeout * 1000) .. ' ' .. lease .. ' ' .. owner)
							redis.call('pexpire', KEYS[3], 2 * timeout)
							redis.call('pexpire', KEYS[4], 2 * timeout)
							if held then
							  if type(held) == 'string' and not waited(held) then
							    redis.call('append', lock, ' w')
							  end
							  return -1 - math.max(redis.call('pttl', lock), 0)
							end
							return -1
							""",
			Long.class);

	/**
	 * A Lua function for scripts that signal a release: {@code signal(channel, sharded,
	 * message)} publishes (protected: returns {@value #RELEASED_UNSIGNALLED} if refused,
	 * else 1).
	 */
	static final String SIGNAL_FUNCTION = """
			local function signal(channel, sharded, message)
			  local sent = redis.pcall((sharded == '1') and 'spublish' or 'publish', channel, message)
			  if type(sent) == 'table' and sent.err then
			    return 2
			  end
			  return 1
			end
			""";

	/**
	 * Lua functions for scripts that end a fair lock: {@code signal} (see
	 * {@link #SIGNAL_FUNCTION}), and
	 * {@code grant_next(lock, counter, queue, waiters, channel, sharded,
	 * held)} hands a lock its caller holds to the first queued waiter whose place has not
	 * expired: it takes the waiter out of the queue, writes the lock for the waiter's
	 * owner with a new fencing token (marked when others still queue), and publishes
	 * {@code <lock key>\n<waiter id> <token> <claim ms>}, so that the waiter holds the
	 * lock without asking again. The granted lock's TTL, the claim, is what is left of
	 * the waiter's place in the queue (at most its lease), not its lease: a waiter that
	 * died with its place still kept holds the lock up no longer than it held up the
	 * queue. A live waiter extends the claim to its lease as it takes the grant. Expired
	 * waiters met on the way are dropped. With nobody to grant to, it deletes the lock
	 * and signals as {@link #RELEASE} does.
	 */
	static final String GRANT_FUNCTIONS = SIGNAL_FUNCTION + """
			local function grant_next(lock, counter, queue, waiters, channel, sharded, held)
			  local now = redis.call('time')
			  local micros = tonumber(now[1]) * 1000000 + tonumber(now[2])
			  while true do
			    local head = redis.call('zrange', queue, 0, 0)
			    if #head == 0 then
			      break
			    end
			    local record = redis.call('hget', waiters, head[1])
			    redis.call('zrem', queue, head[1])
			    redis.call('hdel', waiters, head[1])
			    local deadline, lease, owner = string.match(record or '', '^(%d+) (%d+) (%S+)$')
			    if deadline and tonumber(deadline) > micros then
			""" + NEXT_TOKEN
			+ """
					      local value = owner .. ' ' .. string.format('%d', token)
					      if redis.call('zcard', queue) > 0 then
					        value = value .. ' w'
					      end
					      local claim = math.max(1, math.min(tonumber(lease), math.floor((tonumber(deadline) - micros) / 1000)))
					      redis.call('set', lock, value, 'PX', claim)
					      return signal(channel, sharded, lock .. '\\n' .. head[1] .. ' ' .. string.format('%d', token) .. ' ' .. claim)
					    end
					  end
					  redis.call('del', lock)
					  if waited(held) then
					    return signal(channel, sharded, lock)
					  end
					  return 1
					end
					""";

	/**
	 * Releases a fair lock, granting it to the next waiter. KEYS[1] lock, KEYS[2] fencing
	 * counter, KEYS[3] queue, KEYS[4] waiters, all in one slot; ARGV[1] owner, ARGV[2]
	 * release channel, ARGV[3] {@code 1} to publish sharded. Returns as {@link #RELEASE}.
	 */
	static final RedisScript<Long> FAIR_RELEASE = RedisScript.of(MUTEX_FUNCTIONS + GRANT_FUNCTIONS + """
			local held = redis.pcall('get', KEYS[1])
			if not owns(held, ARGV[1]) then
			  return 0
			end
			return grant_next(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[2], ARGV[3], held)
			""", Long.class);

	/**
	 * KEYS[1] lock, KEYS[2] queue, KEYS[3] waiters, KEYS[4] fencing counter; ARGV[1]
	 * waiter id, ARGV[2] release channel, ARGV[3] {@code 1} to publish sharded, ARGV[4]
	 * the waiter's owner. Removes a waiter that gave up. A lock granted to it meanwhile
	 * (the grant crossed the give-up) is granted on to the next waiter; a free lock tells
	 * the next waiter at once. A refused publish is logged at debug level only: the place
	 * is gone either way.
	 */
	static final RedisScript<Long> LEAVE_QUEUE = RedisScript.of(MUTEX_FUNCTIONS + GRANT_FUNCTIONS + """
			redis.call('zrem', KEYS[2], ARGV[1])
			redis.call('hdel', KEYS[3], ARGV[1])
			local held = redis.pcall('get', KEYS[1])
			if ARGV[4] and owns(held, ARGV[4]) then
			  return grant_next(KEYS[1], KEYS[4], KEYS[2], KEYS[3], ARGV[2], ARGV[3], held)
			end
			if not held and redis.call('zcard', KEYS[2]) > 0 then
			  return signal(ARGV[2], ARGV[3], KEYS[1])
			end
			return 1
			""", Long.class);

	/**
	 * KEYS[1] lock; ARGV[1] owner, ARGV[2] release channel, ARGV[3] {@code 1} to publish
	 * sharded, ARGV[4] (optional) {@code 1} to tell a marked lock. Returns 1 if deleted,
	 * 0 if not ours, {@value #RELEASED_UNSIGNALLED} if deleted but the signal could not
	 * be published, and, when asked, {@value #RELEASED_TO_WAITERS} if deleted and a
	 * waiter had marked it (the holder's JVM then lets that waiter go first). Publishes
	 * the lock's key only if a waiter marked it, so an uncontended release costs no
	 * message. A sharded channel must lie in the lock's slot ({@code SPUBLISH} from a
	 * script obeys the same slot rule as keys); {@code SPUBLISH} is never called on a
	 * server older than Redis 7.
	 *
	 * <p>
	 * The publish is a {@code pcall}: Redis does not roll a script back, so a publish
	 * refused after the delete (an ACL user without the right to publish to the channel)
	 * must not turn a release that happened into an error. Waiters then find the lock
	 * free at their retry interval.
	 */
	static final RedisScript<Long> RELEASE = RedisScript.of(MUTEX_FUNCTIONS + """
			local held = redis.pcall('get', KEYS[1])
			if owns(held, ARGV[1]) then
			  redis.call('del', KEYS[1])
			  if waited(held) then
			    local sent = redis.pcall((ARGV[3] == '1') and 'spublish' or 'publish', ARGV[2], KEYS[1])
			    if type(sent) == 'table' and sent.err then
			      return 2
			    end
			    if ARGV[4] == '1' then
			      return 3
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
	 * What {@link #RELEASE} returns, when asked, if it deleted a lock that a waiter had
	 * marked and signalled the release.
	 */
	static final long RELEASED_TO_WAITERS = 3;

	/**
	 * KEYS lock keys (one cluster slot); ARGV an owner and a lease in ms per key.
	 * Returns, per key, 1 if renewed and 0 if not ours: one round trip for many held
	 * locks.
	 */
	@SuppressWarnings("rawtypes")
	static final RedisScript<List> RENEW_ALL = RedisScript.of(MUTEX_FUNCTIONS + """
			local renewed = {}
			for i, key in ipairs(KEYS) do
			  if owns(redis.pcall('get', key), ARGV[2 * i - 1]) then
			    redis.call('pexpire', key, ARGV[2 * i])
			    renewed[i] = 1
			  else
			    renewed[i] = 0
			  end
			end
			return renewed
			""", List.class);

}
