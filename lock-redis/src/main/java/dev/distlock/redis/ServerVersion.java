package dev.distlock.redis;

import org.jspecify.annotations.Nullable;

/** Whether a Redis server can run distlock's scripts, from its {@code INFO server}. */
final class ServerVersion {

	private ServerVersion() {
	}

	/**
	 * Why the server cannot run distlock's scripts, when {@code info} says it is older
	 * than Redis 6.2 (they use {@code SET ... GET}); null when it is new enough, or when
	 * it does not say: the scripts then tell.
	 */
	static @Nullable String tooOld(@Nullable String info) {
		String version = (info != null) ? info.lines()
			.filter((line) -> line.startsWith("redis_version:"))
			.map((line) -> line.substring("redis_version:".length()).trim())
			.findFirst()
			.orElse(null) : null;
		if (version == null) {
			return null;
		}
		String[] parts = version.split("\\.");
		try {
			int major = Integer.parseInt(parts[0]);
			int minor = (parts.length > 1) ? Integer.parseInt(parts[1]) : 0;
			if (major > 6 || (major == 6 && minor >= 2)) {
				return null;
			}
		}
		catch (NumberFormatException ex) {
			return null;
		}
		return "distlock's Redis store needs Redis 6.2 or newer (its scripts use SET ... GET), but the server runs "
				+ "Redis " + version + "; every lock call fails until it is upgraded";
	}

}
