package dev.distlock.harness.redis;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds a {@code redis-server} executable: the {@code DISTLOCK_REDIS_SERVER} environment
 * variable or system property, then {@code redis-server} on the {@code PATH}, then the
 * Redis 7.0.15 binary shipped inside the {@code org.signal:embedded-redis} jar, copied
 * once to the temporary directory. The last step is what lets a fresh machine with no
 * Redis installed run the tests and the sample app. A test that needs one version in
 * particular asks for it with {@link #resolve(RedisVersion)}, which always takes the
 * bundled binary of that version.
 */
public final class RedisServerBinary {

	private static volatile Path cached;

	private static final Map<RedisVersion, Path> bundled = new ConcurrentHashMap<>();

	private RedisServerBinary() {
	}

	/**
	 * The bundled binary of the given version, whatever {@code DISTLOCK_REDIS_SERVER} or
	 * the {@code PATH} say; extracted once.
	 */
	public static Path resolve(RedisVersion version) {
		return bundled.computeIfAbsent(version, RedisServerBinary::extractBundled);
	}

	/** The default executable to run; resolved once per JVM. */
	public static Path resolve() {
		Path path = cached;
		if (path == null) {
			synchronized (RedisServerBinary.class) {
				path = cached;
				if (path == null) {
					path = find();
					cached = path;
				}
			}
		}
		return path;
	}

	private static Path find() {
		String configured = System.getProperty("DISTLOCK_REDIS_SERVER", System.getenv("DISTLOCK_REDIS_SERVER"));
		if (configured != null && !configured.isBlank()) {
			Path path = Path.of(configured);
			if (!Files.isExecutable(path)) {
				throw new IllegalStateException("DISTLOCK_REDIS_SERVER=" + configured + " is not an executable file");
			}
			return path;
		}
		String pathEnv = System.getenv("PATH");
		if (pathEnv != null) {
			for (String dir : pathEnv.split(File.pathSeparator)) {
				Path candidate = Path.of(dir, "redis-server");
				if (Files.isExecutable(candidate)) {
					return candidate;
				}
			}
		}
		return resolve(RedisVersion.V7_0);
	}

	/**
	 * Copies the bundled binary once to {@code <tmpdir>/distlock-redis-server/<name>} and
	 * reuses it from then on, across JVMs (worker JVMs killed with SIGKILL never run exit
	 * hooks, so per-JVM copies would pile up). The copy is written beside the target and
	 * moved into place atomically, so concurrent JVMs never run a half-written file.
	 */
	private static Path extractBundled(RedisVersion version) {
		String resource = version.resourceName();
		try (InputStream in = RedisServerBinary.class.getClassLoader().getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("No redis-server on the PATH and no bundled binary " + resource
						+ " on the class path; install redis-server or set DISTLOCK_REDIS_SERVER");
			}
			Path dir = Files.createDirectories(Path.of(System.getProperty("java.io.tmpdir"), "distlock-redis-server"));
			Path target = dir.resolve(resource);
			if (Files.isExecutable(target)) {
				return target;
			}
			Path partial = Files.createTempFile(dir, resource, ".partial");
			Files.copy(in, partial, StandardCopyOption.REPLACE_EXISTING);
			if (!partial.toFile().setExecutable(true, false)) {
				throw new IllegalStateException("Could not make " + partial + " executable");
			}
			Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
			return target;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not extract the bundled redis-server", ex);
		}
	}

}
