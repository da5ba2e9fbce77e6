package dev.distlock.redis;

import java.time.Duration;
import java.util.List;

import dev.distlock.DistributedLatch;
import dev.distlock.LockBackendException;
import dev.distlock.spi.LatchStore;
import dev.distlock.spi.ReleaseSignals;
import io.lettuce.core.ScriptOutputType;
import org.jspecify.annotations.Nullable;

/**
 * Countdown latches on Redis: one hash per latch ({@link FamilyScripts#LATCH_JOIN}), in a
 * key space of their own ({@code {<slot tag>}<prefix><name>:latch}, which no lock key can
 * be, since lock keys never start with '{'), with the expiry as its TTL. Openings and
 * re-arms are published on the release channel of the latch's slot, so waiters share the
 * lock's subscription.
 */
final class RedisLatches implements LatchStore {

	private static final DistributedLatch.CountDown[] OUTCOMES = { DistributedLatch.CountDown.COUNTED,
			DistributedLatch.CountDown.ALREADY_COUNTED, DistributedLatch.CountDown.ALREADY_OPEN,
			DistributedLatch.CountDown.STALE };

	private final RedisLockProvider provider;

	private final RedisCalls calls;

	private final RedisKeys keys;

	private final ReleaseSignals signals;

	RedisLatches(RedisLockProvider provider, RedisCalls calls, RedisKeys keys, RedisReleaseSignals releaseSignals) {
		this.provider = provider;
		this.calls = calls;
		this.keys = keys;
		this.signals = new ReleaseSignals() {

			@Override
			public Subscription subscribe(String key, Runnable onChange) {
				return releaseSignals.subscribe(latchKey(key), onChange);
			}

			@Override
			public boolean isListening() {
				return releaseSignals.isListening();
			}

			@Override
			public boolean isListening(String key) {
				return releaseSignals.isListening(latchKey(key));
			}

		};
	}

	@Override
	public ReleaseSignals signals() {
		return this.signals;
	}

	private String latchKey(String key) {
		return this.keys.latchKey(this.keys.lockKey(key));
	}

	@Override
	public LatchState join(String key, int count, Duration expiry) {
		String latch = latchKey(key);
		return state(key, call(key, "join", FamilyScripts.LATCH_JOIN, RedisCalls.args(latch, this.keys.fenceKey(latch)),
				Integer.toString(count), millis(expiry)));
	}

	@Override
	public @Nullable LatchState state(String key) {
		List<Object> reply = call(key, "read", FamilyScripts.LATCH_STATE, RedisCalls.args(latchKey(key)));
		return reply.isEmpty() ? null : state(key, reply);
	}

	@Override
	public DistributedLatch.CountDown countDown(String key, long generation, String participant, Duration expiry) {
		String latch = latchKey(key);
		String[] publish = this.provider.publishArgs(latch);
		Long outcome = this.calls.call(key, "count down", FamilyScripts.LATCH_COUNT_DOWN, ScriptOutputType.INTEGER,
				this.calls.deadline(), RedisCalls.args(latch),
				RedisCalls.args(Long.toString(generation), participant, millis(expiry), publish[0], publish[1]));
		if (outcome == null || outcome < 0 || outcome >= OUTCOMES.length) {
			throw new LockBackendException(key, "Redis gave no valid reply to count down latch '" + key + "'",
					new IllegalStateException("script result " + outcome));
		}
		return OUTCOMES[outcome.intValue()];
	}

	@Override
	public LatchState rearm(String key, long generation, int count, Duration expiry) {
		String latch = latchKey(key);
		String[] publish = this.provider.publishArgs(latch);
		return state(key,
				call(key, "re-arm", FamilyScripts.LATCH_REARM, RedisCalls.args(latch, this.keys.fenceKey(latch)),
						Long.toString(generation), Integer.toString(count), millis(expiry), publish[0], publish[1]));
	}

	@SuppressWarnings({ "unchecked", "rawtypes" })
	private List<Object> call(String key, String operation,
			org.springframework.data.redis.core.script.RedisScript<List> script, byte[][] redisKeys, String... args) {
		List<Object> reply = this.calls.call(key, operation + " latch", script, ScriptOutputType.MULTI,
				this.calls.deadline(), redisKeys, RedisCalls.args(args));
		if (reply == null) {
			throw new LockBackendException(key, "Redis returned no reply to " + operation + " latch '" + key + "'",
					new IllegalStateException("null script result"));
		}
		return reply;
	}

	private static LatchState state(String key, List<Object> reply) {
		if (reply.size() < 5) {
			throw new LockBackendException(key, "Redis replied " + reply + " for latch '" + key + "'",
					new IllegalStateException("short latch state"));
		}
		return new LatchState(number(reply, 0), (int) number(reply, 1),
				(int) Math.max(0, number(reply, 1) - number(reply, 2)), number(reply, 3), number(reply, 4) == 1);
	}

	private static long number(List<Object> reply, int index) {
		return ((Number) reply.get(index)).longValue();
	}

	private static String millis(Duration duration) {
		return Long.toString(Math.max(1, duration.toMillis()));
	}

}
