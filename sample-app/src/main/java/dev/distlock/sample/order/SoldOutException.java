package dev.distlock.sample.order;

/**
 * Thrown when an order finds no stock left: the expected way for an order to be turned
 * down (HTTP 409).
 */
public class SoldOutException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public SoldOutException(String sku) {
		super("SKU '" + sku + "' is sold out");
	}

}
