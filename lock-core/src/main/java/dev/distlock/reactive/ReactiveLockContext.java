package dev.distlock.reactive;

import java.util.ArrayList;
import java.util.List;

import dev.distlock.Lease;
import dev.distlock.MultiLease;
import reactor.core.publisher.Mono;
import reactor.util.context.Context;
import reactor.util.context.ContextView;

/**
 * The leases a reactive pipeline runs under: the reactive counterpart of
 * {@link dev.distlock.LockContext}, carried by the Reactor {@link Context} instead of a
 * thread. {@link ReactiveLockTemplate#execute} (and the annotation on a reactive method)
 * puts its lease in the context of the work it runs, so that anything in that work, on
 * whatever thread it runs, sees the lease and re-enters it: a nested acquisition of the
 * same key inside the pipeline joins the held lock instead of waiting for it.
 *
 * <p>
 * The context entry is public so that other carriers can bridge it: under the key
 * {@link #LEASES} the context holds an unmodifiable {@code List<Lease>}, innermost first.
 * Kotlin coroutines carry it in their {@code ReactorContext}.
 */
public final class ReactiveLockContext {

	/**
	 * The Reactor {@link Context} key under which a pipeline's leases live: the value is
	 * an unmodifiable {@code List<Lease>}, innermost first.
	 */
	public static final String LEASES = "dev.distlock.reactive.leases";

	private ReactiveLockContext() {
	}

	/**
	 * The innermost lease of the pipeline that subscribes to the returned {@code Mono},
	 * for example to pass its fencing token on; empty outside any locked work.
	 */
	public static Mono<Lease> current() {
		return Mono.deferContextual((context) -> {
			List<Lease> leases = leases(context);
			return leases.isEmpty() ? Mono.empty() : Mono.just(leases.get(0));
		});
	}

	/**
	 * The innermost lease of the pipeline on {@code key} (for a multi-key lease holding
	 * it, that key's part); empty if the pipeline holds no lock on {@code key}.
	 */
	public static Mono<Lease> current(String key) {
		return Mono.deferContextual((context) -> {
			for (Lease lease : leases(context)) {
				if (lease instanceof MultiLease multi && multi.keys().contains(key)) {
					return Mono.just(new MultiLeasePart(multi, key));
				}
				if (lease.key().equals(key)) {
					return Mono.just(lease);
				}
			}
			return Mono.empty();
		});
	}

	/** The leases in {@code context}, innermost first; empty if none. */
	@SuppressWarnings("unchecked")
	public static List<Lease> leases(ContextView context) {
		return context.<List<Lease>>getOrEmpty(LEASES).orElse(List.of());
	}

	/**
	 * {@code context} with {@code lease} as the innermost lease, for work run holding it.
	 */
	public static Context with(Context context, Lease lease) {
		List<Lease> leases = new ArrayList<>(leases(context).size() + 1);
		leases.add(lease);
		leases.addAll(leases(context));
		return context.put(LEASES, List.copyOf(leases));
	}

	/**
	 * One key of a multi-key lease, as {@link #current(String)} returns it: its own
	 * fencing token; releasing it is refused, as the multi-key lease is released whole.
	 */
	private record MultiLeasePart(MultiLease multi, String key) implements Lease {

		@Override
		public long fencingToken() {
			return this.multi.fencingToken(this.key);
		}

		@Override
		public boolean isHeld() {
			return this.multi.isHeld();
		}

		@Override
		public void release() {
			throw new UnsupportedOperationException("Lock '" + this.key + "' is one key of the multi-key lease on "
					+ this.multi.keys() + ", which is released whole by the work that took it");
		}

	}

}
