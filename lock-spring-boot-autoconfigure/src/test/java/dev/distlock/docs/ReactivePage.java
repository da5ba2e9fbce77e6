package dev.distlock.docs;

import java.time.LocalDate;
import java.util.concurrent.CompletableFuture;

import dev.distlock.DistributedLock;
import dev.distlock.LockOptions;
import dev.distlock.OnFailure;
import dev.distlock.reactive.ReactiveLockTemplate;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The code of {@code docs/reactive.md}.
 */
class ReactivePage {

	Inventory inventory;

	ReactiveLockTemplate reactiveLocks;

	Reports reports;

	// @formatter:off
	@DistributedLock(key = "'sku:' + #sku")
	public Mono<Reservation> reserve(String sku, int quantity) {
		return inventory.reserve(sku, quantity);          // a reactive repository, a WebClient call...
	}

	@DistributedLock(key = "'report:' + #day", onFailure = OnFailure.SKIP)
	public CompletableFuture<Report> build(LocalDate day) { throw new UnsupportedOperationException(); }
	// @formatter:on

	void template(String sku, int quantity) {
		// @formatter:off
		reactiveLocks.executeMono("sku:" + sku, LockOptions.defaults(),
				() -> inventory.reserve(sku, quantity))
			.flatMap(reservation -> inventory.confirm(reservation));

		reactiveLocks.holding(reactiveLocks.lock("nightly", LockOptions.defaults()).orSkip(),
				() -> reports.buildAll());                    // completes empty if another instance has it
		// @formatter:on
	}

	record Reservation() {
	}

	record Report() {
	}

	interface Inventory {

		Mono<Reservation> reserve(String sku, int quantity);

		Mono<Void> confirm(Reservation reservation);

	}

	interface Reports {

		Flux<Report> buildAll();

	}

}
