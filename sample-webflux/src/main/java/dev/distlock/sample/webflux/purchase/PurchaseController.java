package dev.distlock.sample.webflux.purchase;

import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.StaleTokenException;
import dev.distlock.sample.webflux.SampleProperties;
import dev.distlock.sample.webflux.stock.StockLevel;
import dev.distlock.sample.webflux.stock.StockStore;
import dev.distlock.sample.webflux.stock.UnknownSkuException;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The reactive HTTP face of the sample: stock a SKU, buy from it, look at it. Each
 * outcome of a purchase has its own status, so a client can count them: 200 sold, 409
 * sold out (or a fenced write refused), 503 the lock was not acquired in time ("Lock
 * busy") or its store is unavailable.
 */
@RestController
public class PurchaseController {

	private final PurchaseService purchases;

	private final LockedPurchaseService lockedPurchases;

	private final StockStore store;

	private final boolean locking;

	public PurchaseController(PurchaseService purchases, LockedPurchaseService lockedPurchases, StockStore store,
			SampleProperties properties) {
		this.purchases = purchases;
		this.lockedPurchases = lockedPurchases;
		this.store = store;
		this.locking = properties.locking();
	}

	/**
	 * {@code PUT /skus/{sku}/stock?quantity=N}: sets the stock to N and the sold count to
	 * 0. Meant for when no purchase of the SKU is in flight.
	 */
	@PutMapping("/skus/{sku}/stock")
	public Mono<StockLevel> restock(@PathVariable String sku, @RequestParam long quantity) {
		if (quantity < 0) {
			return Mono.error(new IllegalArgumentException("quantity must not be negative but was " + quantity));
		}
		return this.store.restock(sku, quantity);
	}

	/** {@code GET /skus/{sku}}: initial, remaining, sold and oversold. */
	@GetMapping("/skus/{sku}")
	public Mono<StockLevel> stock(@PathVariable String sku) {
		return this.store.level(sku);
	}

	/**
	 * {@code POST /skus/{sku}/purchase}: buys one item, under the SKU's lock unless
	 * {@code locking=false} (the default is {@code sample.locking}).
	 */
	@PostMapping("/skus/{sku}/purchase")
	public Mono<Purchase> purchase(@PathVariable String sku,
			@RequestParam(required = false) @Nullable Boolean locking) {
		boolean locked = (locking != null) ? locking : this.locking;
		return locked ? this.lockedPurchases.purchase(sku) : this.purchases.purchaseUnlocked(sku);
	}

	@ExceptionHandler({ SoldOutException.class, StaleTokenException.class })
	public ProblemDetail conflict(RuntimeException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail unknownSku(UnknownSkuException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail lockBusy(LockAcquisitionException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
		problem.setTitle("Lock busy");
		return problem;
	}

	@ExceptionHandler
	public ProblemDetail storeUnavailable(LockBackendException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
				"The lock store is unavailable; nothing was sold: " + ex.getMessage());
		problem.setTitle("Lock store unavailable");
		return problem;
	}

	@ExceptionHandler
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

}
