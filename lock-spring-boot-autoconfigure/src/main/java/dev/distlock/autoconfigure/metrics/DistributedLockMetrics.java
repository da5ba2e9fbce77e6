package dev.distlock.autoconfigure.metrics;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Supplier;

import dev.distlock.Lease;
import dev.distlock.support.DefaultLockTemplate;
import dev.distlock.support.LockObserver;
import dev.distlock.support.RenewalScheduler;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

/**
 * Meters of this JVM's locks. No meter is ever tagged with a lock key: keys are per-call
 * data (an order id), and a tag per key would grow without bound; the lock's name (a
 * fixed label) and the loss reason are the only tags.
 *
 * <table>
 * <caption>Meters</caption>
 * <tr>
 * <th>name</th>
 * <th>type</th>
 * <th>tags</th>
 * <th>what</th>
 * </tr>
 * <tr>
 * <td>{@code distributed.lock.leases.held}</td>
 * <td>gauge</td>
 * <td></td>
 * <td>locks this JVM's callers hold now</td>
 * </tr>
 * <tr>
 * <td>{@code distributed.lock.waiting.keys}</td>
 * <td>gauge</td>
 * <td></td>
 * <td>keys with local threads acquiring or waiting</td>
 * </tr>
 * <tr>
 * <td>{@code distributed.lock.renewals.pending}</td>
 * <td>gauge</td>
 * <td></td>
 * <td>renewals scheduled and not yet sent</td>
 * </tr>
 * <tr>
 * <td>{@code distributed.lock.renewal.round.trips}</td>
 * <td>function counter</td>
 * <td></td>
 * <td>renewal calls sent to the store (each renews a batch of leases)</td>
 * </tr>
 * <tr>
 * <td>{@code distributed.lock.leases.lost}</td>
 * <td>counter</td>
 * <td>{@code lock.name}, {@code reason}</td>
 * <td>held leases found lost: expired, not-owner, store-unreachable, shutdown, other</td>
 * </tr>
 * </table>
 *
 * Acquire and hold times are the observations' timers ({@code distributed.lock.acquire},
 * {@code distributed.lock.hold}), when Observation is on.
 *
 * <p>
 * Every meter exists from the moment it is bound, at zero: {@code leases.lost} for each
 * reason, for the default name and every name given at construction (the configured
 * option sets), so an alert on it has a series to watch before the first loss. A name
 * first seen at a loss gets its counters then.
 */
public final class DistributedLockMetrics implements MeterBinder, LockObserver {

	/** The {@code lock.name} of locks without a name. */
	private static final String DEFAULT_NAME = "default";

	private final Supplier<@Nullable DefaultLockTemplate> template;

	private final Supplier<@Nullable RenewalScheduler> scheduler;

	private final Collection<String> names;

	private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

	/**
	 * @param template the template whose locks to count, looked up when a gauge is read
	 * (null: reads as 0)
	 * @param scheduler the renewal scheduler, looked up likewise
	 */
	public DistributedLockMetrics(Supplier<@Nullable DefaultLockTemplate> template,
			Supplier<@Nullable RenewalScheduler> scheduler) {
		this(template, scheduler, List.of());
	}

	/**
	 * As {@link #DistributedLockMetrics(Supplier, Supplier)}.
	 * @param names the lock names whose loss counters exist from the start, besides
	 * {@code default}: the configured option sets
	 */
	public DistributedLockMetrics(Supplier<@Nullable DefaultLockTemplate> template,
			Supplier<@Nullable RenewalScheduler> scheduler, Collection<String> names) {
		this.template = template;
		this.scheduler = scheduler;
		this.names = List.copyOf(names);
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		Gauge.builder("distributed.lock.leases.held", this, (metrics) -> metrics.fromTemplate(true))
			.description("Distributed locks that this JVM's callers hold now")
			.baseUnit("leases")
			.register(registry);
		Gauge.builder("distributed.lock.waiting.keys", this, (metrics) -> metrics.fromTemplate(false))
			.description("Lock keys with threads of this JVM acquiring or waiting")
			.baseUnit("keys")
			.register(registry);
		Gauge.builder("distributed.lock.renewals.pending", this, (metrics) -> metrics.fromScheduler(false))
			.description("Lease renewals scheduled and not yet sent")
			.baseUnit("renewals")
			.register(registry);
		FunctionCounter.builder("distributed.lock.renewal.round.trips", this, (metrics) -> metrics.fromScheduler(true))
			.description("Renewal calls sent to the store; each renews a batch of leases")
			.register(registry);
		Set<String> names = new LinkedHashSet<>();
		names.add(DEFAULT_NAME);
		names.addAll(this.names);
		for (String name : names) {
			for (LossReason reason : LossReason.values()) {
				leasesLost(registry, name, reason);
			}
		}
		this.registries.add(registry);
	}

	@Override
	public void leaseLost(Lease lease, @Nullable String name, LossReason reason) {
		for (MeterRegistry registry : this.registries) {
			leasesLost(registry, (name != null) ? name : DEFAULT_NAME, reason).increment();
		}
	}

	private static Counter leasesLost(MeterRegistry registry, String name, LossReason reason) {
		return Counter.builder("distributed.lock.leases.lost")
			.description("Held leases found lost, by reason")
			.tag("lock.name", name)
			.tag("reason", reason.tagValue())
			.register(registry);
	}

	private double fromTemplate(boolean held) {
		DefaultLockTemplate current = this.template.get();
		return (current == null) ? 0 : held ? current.heldLocks() : current.queuedKeys();
	}

	private double fromScheduler(boolean batches) {
		RenewalScheduler current = this.scheduler.get();
		return (current == null) ? 0 : batches ? current.batches() : current.pendingTasks();
	}

}
