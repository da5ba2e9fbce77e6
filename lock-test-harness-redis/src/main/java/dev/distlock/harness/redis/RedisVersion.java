package dev.distlock.harness.redis;

import java.util.Locale;

import org.jspecify.annotations.Nullable;

/**
 * The {@code redis-server} versions bundled in Maven artifacts, for tests that need one
 * version in particular, whatever {@code redis-server} the machine has: {@link #V7_0} is
 * the default, {@link #V6_2} proves the fallbacks for servers without Redis 7 features
 * (sharded pub/sub).
 */
public enum RedisVersion {

	/**
	 * Redis 2.8.19, from {@code it.ozimov:embedded-redis}: a server too old for distlock,
	 * for the check that says so. Linux amd64 and macOS amd64 only.
	 */
	V2_8("redis-server-2.8.19", null, "redis-server-2.8.19.app", null),

	/**
	 * Redis 6.2 (the Linux amd64 binary reports 6.2.11), from
	 * {@code com.github.codemonstur:embedded-redis}.
	 */
	V6_2("redis-server-6.2.6-v5-linux-amd64", "redis-server-6.2.7-linux-arm64", "redis-server-6.2.6-v5-darwin-amd64",
			"redis-server-6.2.6-v5-darwin-arm64"),

	/** Redis 7.0.15, from {@code org.signal:embedded-redis}. */
	V7_0("redis-server-7.0.15-linux-amd64", "redis-server-7.0.15-linux-arm64", "redis-server-7.0.15-darwin-amd64",
			"redis-server-7.0.15-darwin-arm64");

	private final String linuxAmd64;

	private final @Nullable String linuxArm64;

	private final String macAmd64;

	private final @Nullable String macArm64;

	RedisVersion(String linuxAmd64, @Nullable String linuxArm64, String macAmd64, @Nullable String macArm64) {
		this.linuxAmd64 = linuxAmd64;
		this.linuxArm64 = linuxArm64;
		this.macAmd64 = macAmd64;
		this.macArm64 = macArm64;
	}

	/** The class-path resource of this version's binary for the running OS and CPU. */
	String resourceName() {
		String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		boolean arm = arch.contains("aarch64") || arch.contains("arm64");
		String resource = null;
		if (os.contains("linux")) {
			resource = arm ? this.linuxArm64 : this.linuxAmd64;
		}
		else if (os.contains("mac")) {
			resource = arm ? this.macArm64 : this.macAmd64;
		}
		if (resource != null) {
			return resource;
		}
		throw new IllegalStateException("No bundled redis-server " + this + " for " + os + "/" + arch
				+ "; install redis-server or set DISTLOCK_REDIS_SERVER");
	}

}
