package dev.distlock.support;

import java.util.List;

import org.jspecify.annotations.Nullable;

/** What a template accepts as lock keys. */
final class LockKeys {

	/** Longer keys are rejected: a key names a resource, and Redis keys cost memory. */
	static final int MAX_KEY_LENGTH = 1024;

	private LockKeys() {
	}

	/** Checks a key as every acquisition does: not blank, not too long. */
	static void check(@Nullable String key) {
		if (key == null || key.isBlank()) {
			throw new IllegalArgumentException("Lock key must not be null or blank but was '" + key + "'");
		}
		if (key.length() > MAX_KEY_LENGTH) {
			throw new IllegalArgumentException(
					"Lock key is " + key.length() + " characters long, more than " + MAX_KEY_LENGTH + " (it starts '"
							+ key.substring(0, 40) + "…'): use an identifier, not a" + " payload, as the key");
		}
	}

	/** Checks the keys and options of a multi-key acquisition. */
	static LockSettings checkedAll(List<String> keys, LockSettings settings) {
		keys.forEach(LockKeys::check);
		if (settings.fair()) {
			throw new IllegalArgumentException("Multi-key locks " + keys + " cannot be fair: a fair lock queues for"
					+ " one key, and a multi-key lock takes all its keys at once");
		}
		return settings;
	}

}
