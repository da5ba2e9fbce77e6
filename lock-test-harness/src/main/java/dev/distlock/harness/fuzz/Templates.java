package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.Map;

import dev.distlock.LockOptions;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.spi.LockProvider;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;

/**
 * The lock template every fuzz and holder JVM uses, so that each side of a test locks
 * alike whatever the store.
 */
public final class Templates {

	/**
	 * The defaults: no waiting, a 30 s lease, auto-renew on, retries every 20 ms.
	 */
	public static final LockOptions DEFAULTS = LockOptions.builder()
		.waitTime(Duration.ZERO)
		.leaseTime(Duration.ofSeconds(30))
		.autoRenew(true)
		.retryInterval(Duration.ofMillis(20))
		.build();

	/** How long a provider may take to answer its first call. */
	static final Duration WARM_UP = Duration.ofSeconds(30);

	private Templates() {
	}

	/**
	 * The provider {@code store} creates from {@code settings}, once it answers
	 * ({@link ProviderFactory#awaitAnswers}).
	 */
	public static LockProvider answering(ProviderFactory store, Map<String, String> settings) {
		LockProvider provider = store.create(settings);
		ProviderFactory.awaitAnswers(provider, WARM_UP);
		return provider;
	}

	/**
	 * A template over {@code provider}, as an application instance would have one, with
	 * {@link #DEFAULTS} and local hand-over on ({@link HandoverSettings#ON}), so that the
	 * fuzz tests exercise it wherever the store offers it.
	 */
	public static DefaultLockTemplate of(LockProvider provider, RenewalScheduler scheduler) {
		return new DefaultLockTemplate(provider, scheduler, DEFAULTS, LeaseLossListener.NONE, true, LockObserver.NONE,
				HandoverSettings.ON);
	}

}
