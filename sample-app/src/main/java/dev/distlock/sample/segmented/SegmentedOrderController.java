package dev.distlock.sample.segmented;

import dev.distlock.LockAcquisitionException;
import dev.distlock.LockBackendException;
import dev.distlock.StaleTokenException;
import dev.distlock.sample.order.SoldOutException;
import dev.distlock.sample.order.UnknownSkuException;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The HTTP face of {@link SegmentedOrderService}: {@code PUT /segmented-stock/{sku}},
 * {@code GET /segmented-stock/{sku}}, {@code POST /segmented-orders}. Outcomes map as for
 * single-lock orders: 200 accepted, 409 sold out (or a fenced write rejected), 404
 * unknown SKU, 503 no segment came free in time or the lock store is unavailable.
 */
@RestController
public class SegmentedOrderController {

	private final SegmentedOrderService orders;

	public SegmentedOrderController(SegmentedOrderService orders) {
		this.orders = orders;
	}

	/**
	 * {@code PUT /segmented-stock/{sku}?quantity=N&segments=S}: N units over S segments
	 * (default 16).
	 */
	@PutMapping("/segmented-stock/{sku}")
	public SegmentedStockLevel restock(@PathVariable String sku, @RequestParam long quantity,
			@RequestParam(defaultValue = "16") int segments) {
		return this.orders.restock(sku, quantity, segments);
	}

	/** {@code GET /segmented-stock/{sku}}: units left per segment, accepted, oversold. */
	@GetMapping("/segmented-stock/{sku}")
	public SegmentedStockLevel stock(@PathVariable String sku) {
		return this.orders.stock(sku);
	}

	/** {@code POST /segmented-orders?sku=X&quantity=Q}: takes Q units (default 1). */
	@PostMapping("/segmented-orders")
	@ResponseStatus(HttpStatus.OK)
	public void order(@RequestParam String sku, @RequestParam(defaultValue = "1") int quantity) {
		this.orders.order(sku, quantity);
	}

	@ExceptionHandler({ SoldOutException.class, StaleTokenException.class })
	public ProblemDetail conflict(RuntimeException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail unknownSku(UnknownSkuException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.NOT_FOUND, ex.getMessage());
	}

	@ExceptionHandler({ LockAcquisitionException.class, LockBackendException.class })
	public ProblemDetail unavailable(RuntimeException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, ex.getMessage());
	}

	@ExceptionHandler
	public ProblemDetail badRequest(IllegalArgumentException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

}
