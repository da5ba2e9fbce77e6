package dev.distlock.sample.order;

/**
 * Thrown when a stock write carries a fencing token no greater than one the stock record
 * has already seen: the writer's lock lease was lost (a long pause, a failover) and
 * another holder has written since. Rejecting the write is what keeps a lost lease from
 * corrupting the stock (HTTP 409).
 */
public class StaleWriteException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public StaleWriteException(String sku, long token) {
		super("Stock write for SKU '" + sku + "' with fencing token " + token
				+ " rejected: a later lock holder has already written");
	}

}
