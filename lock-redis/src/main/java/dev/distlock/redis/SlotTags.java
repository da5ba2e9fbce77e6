package dev.distlock.redis;

import org.springframework.data.redis.connection.ClusterSlotHashUtil;

/**
 * For each of the 16384 cluster slots, a short string that hashes to it, so that a hash
 * tag can place a key in any chosen slot. Computed once, on first use, in a few
 * milliseconds.
 */
final class SlotTags {

	private static final int SLOTS = 16384;

	private SlotTags() {
	}

	static String forSlot(int slot) {
		return Holder.TAGS[slot];
	}

	private static final class Holder {

		static final String[] TAGS = compute();

		private static String[] compute() {
			String[] tags = new String[SLOTS];
			int found = 0;
			for (int i = 0; found < SLOTS; i++) {
				String tag = Integer.toString(i, 36);
				int slot = ClusterSlotHashUtil.calculateSlot(tag);
				if (tags[slot] == null) {
					tags[slot] = tag;
					found++;
				}
			}
			return tags;
		}

	}

}
