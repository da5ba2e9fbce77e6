package dev.distlock.sample.webflux.stock;

/**
 * A SKU that was never stocked, so a typo is not mistaken for "sold out" (HTTP 404).
 */
public class UnknownSkuException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public UnknownSkuException(String sku) {
		super("SKU '" + sku + "' has no stock record; create one with PUT /skus/" + sku + "/stock?quantity=N");
	}

}
