package dev.distlock.sample.segmented;

import java.util.List;

/**
 * The segmented stock of one SKU, with the oversell it shows.
 *
 * @param sku the SKU
 * @param initial units set by the last restock
 * @param remaining units left over all segments
 * @param accepted units sold since the last restock
 * @param oversold units sold beyond the initial quantity; 0 when the stock was protected
 * @param negativeSegment whether a segment went below zero
 * @param segments units left per segment
 */
public record SegmentedStockLevel(String sku, long initial, long remaining, long accepted, long oversold,
		boolean negativeSegment, List<Long> segments) {
}
