package dev.distlock.sample.order;

import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.StaleTokenException;

import org.springframework.dao.DataAccessException;
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
 * The HTTP face of {@link OrderService}: restock, order, inspect. Every outcome an order
 * can have gets its own status, so a load generator can count them: 200 accepted, 409
 * sold out (or a fenced write rejected), 503 the lock was not acquired in time ("Lock
 * busy") or its store is unavailable ("Lock store unavailable").
 */
@RestController
public class OrderController {

	private final OrderService orders;

	public OrderController(OrderService orders) {
		this.orders = orders;
	}

	/**
	 * {@code PUT /stock/{sku}?quantity=N}: sets the stock to N and the accepted count to
	 * 0.
	 */
	@PutMapping("/stock/{sku}")
	public StockLevel restock(@PathVariable String sku, @RequestParam long quantity) {
		return this.orders.restock(sku, quantity);
	}

	/** {@code GET /stock/{sku}}: initial, remaining, accepted and oversold. */
	@GetMapping("/stock/{sku}")
	public StockLevel stock(@PathVariable String sku) {
		return this.orders.stock(sku);
	}

	/**
	 * {@code POST /orders?sku=X&lock=true|false}: places one order, with the lock unless
	 * {@code lock=false}.
	 */
	@PostMapping("/orders")
	public OrderConfirmation order(@RequestParam String sku, @RequestParam(defaultValue = "true") boolean lock) {
		return lock ? this.orders.placeOrder(sku) : this.orders.placeOrderUnlocked(sku);
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

	/**
	 * The lock store (Redis) failed or did not answer within
	 * {@code distributed-lock.store-timeout}: the order was not placed, and the caller
	 * may retry once the store is back.
	 */
	@ExceptionHandler
	public ProblemDetail storeUnavailable(LockBackendException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
				"The lock store is unavailable; the order was not placed: " + ex.getMessage());
		problem.setTitle("Lock store unavailable");
		return problem;
	}

	/** The stock store (the same Redis) failed: nothing was written. */
	@ExceptionHandler
	public ProblemDetail stockStoreUnavailable(DataAccessException ex) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE,
				"The stock store is unavailable: " + ex.getMostSpecificCause().getMessage());
		problem.setTitle("Stock store unavailable");
		return problem;
	}

	@ExceptionHandler
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

}
