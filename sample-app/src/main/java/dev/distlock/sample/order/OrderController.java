package dev.distlock.sample.order;

import dev.distlock.LockAcquisitionException;

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
 * sold out (or a fenced write rejected), 503 the lock was not acquired in time.
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

	@ExceptionHandler({ SoldOutException.class, StaleWriteException.class })
	public ProblemDetail conflict(RuntimeException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail unknownSku(UnknownSkuException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail lockBusy(LockAcquisitionException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

}
