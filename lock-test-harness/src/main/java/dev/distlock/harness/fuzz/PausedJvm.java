package dev.distlock.harness.fuzz;

import java.time.Duration;
import java.util.Map;

import dev.distlock.LockOptions;
import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.WorkerArgs;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.HandoverSettings;
import dev.distlock.support.LeaseLossListener;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;

/**
 * What a holder JVM to be stopped ({@link PausedHolder}, {@link HandoverPausedHolder})
 * sets up from its command line: the key, the lock options (a wait of up to 5 s, the
 * lease of the settings, renewed, retries every 20 ms), the store, a renewal scheduler
 * and the fenced register it writes to.
 */
final class PausedJvm implements AutoCloseable {

	final Map<String, String> settings;

	final String key;

	final LockOptions options;

	final ProviderFactory store;

	final RenewalScheduler scheduler = new RenewalScheduler();

	final FencedRegister register;

	PausedJvm(String[] args) {
		this.settings = WorkerArgs.parse(args);
		this.key = WorkerArgs.require(this.settings, LockHolder.KEY);
		this.options = LockOptions.builder()
			.waitTime(Duration.ofSeconds(5))
			.leaseTime(Duration.ofMillis(WorkerArgs.number(this.settings, LockHolder.LEASE_MILLIS)))
			.autoRenew(true)
			.retryInterval(Duration.ofMillis(20))
			.build();
		this.store = WorkerArgs.instance(this.settings, WorkerArgs.PROVIDER, ProviderFactory.class);
		this.register = WorkerArgs.instance(this.settings, WorkerArgs.RESOURCES, ResourceFactory.class)
			.fencedRegister(this.settings);
	}

	/**
	 * A template over the store's provider, once it answers, with {@link #options}, the
	 * release after commit on, and {@code handover}.
	 */
	DefaultLockTemplate template(LeaseLossListener lossListener, HandoverSettings handover) {
		return new DefaultLockTemplate(Templates.answering(this.store, this.settings), this.scheduler, this.options,
				lossListener, true, LockObserver.NONE, handover);
	}

	@Override
	public void close() {
		this.scheduler.close();
		this.register.close();
		this.store.close();
	}

}
