package dev.distlock.contract;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import dev.distlock.LockOptions;
import dev.distlock.spi.LockAttempt;
import dev.distlock.spi.LockHandle;
import dev.distlock.spi.LockKind;
import dev.distlock.spi.LockProvider;
import dev.distlock.spi.LockRequest;
import dev.distlock.spi.ReleaseSignalling;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.RenewalScheduler;

import static org.assertj.core.api.Assertions.fail;

/**
 * Templates over a store under test, one per simulated JVM, and the attempt helpers the
 * family contract suites share. The retry interval is a minute, so that a waiter that
 * polled instead of being woken by a signal would fail its test by timing out.
 */
final class ContractTemplates implements AutoCloseable {

	static final Duration RETRY = Duration.ofMinutes(1);

	private final List<AutoCloseable> closeables = new ArrayList<>();

	/**
	 * A template with the given lease, a 45 s wait and a retry interval of a minute: a
	 * waiter that missed its signal would wake after the tests' 20 s bounds.
	 */
	DefaultLockTemplate template(LockProvider provider, Duration leaseTime) {
		RenewalScheduler scheduler = new RenewalScheduler();
		DefaultLockTemplate template = new DefaultLockTemplate(provider, scheduler,
				LockOptions.builder()
					.waitTime(Duration.ofSeconds(45))
					.leaseTime(leaseTime)
					.autoRenew(true)
					.retryInterval(RETRY)
					.build());
		this.closeables.add(template);
		this.closeables.add(scheduler);
		return template;
	}

	/**
	 * {@code provider} with every capability it has, counting in {@code busy} the read
	 * and permit attempts that found the key busy while the store's signals for it were
	 * listened to: a test waits for them, so that its waiters are known to wait for a
	 * signal (for their retry interval, not a short backoff) before it frees the key.
	 */
	@SuppressWarnings("unchecked")
	static <P extends LockProvider> P countingBusy(P provider, AtomicInteger busy) {
		Set<Class<?>> interfaces = new LinkedHashSet<>();
		for (Class<?> type = provider.getClass(); type != null; type = type.getSuperclass()) {
			interfaces.addAll(List.of(type.getInterfaces()));
		}
		return (P) Proxy.newProxyInstance(ContractTemplates.class.getClassLoader(), interfaces.toArray(Class<?>[]::new),
				(proxy, method, args) -> {
					Object result;
					try {
						result = method.invoke(provider, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
					if (result instanceof CompletionStage<?> answer && args[0] instanceof LockRequest request) {
						return answer.thenApply((attempt) -> {
							if (attempt instanceof LockAttempt.Busy && listening(provider, request)) {
								busy.incrementAndGet();
							}
							return attempt;
						});
					}
					return result;
				});
	}

	private static boolean listening(LockProvider provider, LockRequest request) {
		if (request.kind() == LockKind.PERMITS) {
			return ((ReleaseSignalling) provider).permitSignals().isListening(request.key());
		}
		if (request.kind() == LockKind.SHARED) {
			return !(provider instanceof ReleaseSignalling signalling)
					|| signalling.releaseSignals().isListening(request.key());
		}
		return false;
	}

	@Override
	public void close() throws Exception {
		for (AutoCloseable closeable : this.closeables) {
			closeable.close();
		}
	}

	/** Waits for a latch a test's holders count down, at most 30 s. */
	static void await(CountDownLatch latch) {
		try {
			if (!latch.await(30, TimeUnit.SECONDS)) {
				throw new AssertionError("latch not released");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new AssertionError(ex);
		}
	}

	static LockHandle acquired(LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			return acquired.handle();
		}
		return fail("expected an acquisition but was " + attempt);
	}

	static void assertBusy(String what, LockAttempt attempt) {
		if (attempt instanceof LockAttempt.Acquired acquired) {
			acquired.handle().release();
			fail("expected busy but was acquired: " + what);
		}
	}

	/** Retries until acquired, within the short lease plus five seconds. */
	static LockHandle awaitAcquired(String what, Duration shortLease, Supplier<LockAttempt> attempt) {
		long deadline = System.nanoTime() + shortLease.plusSeconds(5).toNanos();
		while (System.nanoTime() - deadline < 0) {
			if (attempt.get() instanceof LockAttempt.Acquired acquired) {
				return acquired.handle();
			}
			LockSupport.parkNanos(1_000_000);
		}
		return fail("not acquired in time: " + what);
	}

}
