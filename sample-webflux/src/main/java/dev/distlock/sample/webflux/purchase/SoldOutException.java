package dev.distlock.sample.webflux.purchase;

/**
 * A purchase found no stock left: the expected way for a purchase to be turned down (HTTP
 * 409).
 */
public class SoldOutException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public SoldOutException(String sku) {
		super("SKU '" + sku + "' is sold out");
	}

}
