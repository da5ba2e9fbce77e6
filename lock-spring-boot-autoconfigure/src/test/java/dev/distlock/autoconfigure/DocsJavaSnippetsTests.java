package dev.distlock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.distlock.AsyncLockTemplate;
import dev.distlock.LockTemplate;
import dev.distlock.reactive.ReactiveLockTemplate;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the Java and Kotlin code of the documentation ({@code README.md} and
 * {@code docs/**.md}, as {@link DocSnippet} reads them) in step with the API.
 * <ul>
 * <li>Every {@code java} block is an excerpt of a source under
 * {@code src/test/java/dev/distlock/docs}, which this module's test compilation
 * compiles.</li>
 * <li>Every {@code kotlin} block that is not a Gradle build script is an excerpt of a
 * source under {@code lock-kotlin/src/test/kotlin/dev/distlock/docs}, which that module's
 * test compilation compiles.</li>
 * <li>A {@code java} block that lists method signatures, one per line, is checked instead
 * against the template interface that declares them all, as it declares them (without
 * {@code ? extends} and the type parameter).</li>
 * </ul>
 * A block is an excerpt when its text appears in the source, each run of whitespace
 * counting as one space on both sides; an ellipsis ({@code ...}) in the block stands for
 * any text. The Java sources keep each excerpt laid out as the page shows it, between
 * comments that turn the formatter off and on.
 */
class DocsJavaSnippetsTests {

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final Path JAVA_SOURCES = Path.of("lock-spring-boot-autoconfigure/src/test/java/dev/distlock/docs");

	private static final Path KOTLIN_SOURCES = Path.of("lock-kotlin/src/test/kotlin/dev/distlock/docs");

	/** The types whose methods the pages list, as a user injects them. */
	private static final List<Class<?>> LISTED_TYPES = List.of(LockTemplate.class, AsyncLockTemplate.class,
			ReactiveLockTemplate.class);

	private static final Pattern ELLIPSIS = Pattern.compile("\\s*\\.\\.\\.\\s*");

	private static final Pattern WHITESPACE = Pattern.compile("\\s+");

	private static final Pattern SIGNATURE = Pattern.compile("[\\w.<>,?\\[\\] ]+? \\w+\\([\\w.<>,?\\[\\] ]*\\)");

	private static final Pattern GRADLE_BLOCK = Pattern.compile("(?m)^\\s*(plugins|dependencies|repositories)\\s*\\{");

	private static final Pattern PACKAGE_PREFIX = Pattern.compile("\\b[a-z_][\\w]*\\.");

	private static List<DocSnippet> snippets;

	@BeforeAll
	static void read() {
		snippets = DocSnippet.readAll(ROOT);
	}

	@TestFactory
	Stream<DynamicTest> javaBlocksAreExcerptsOfCompiledSources() {
		List<DocSnippet> java = snippets.stream().filter((snippet) -> snippet.language().equals("java")).toList();
		assertThat(java).as("java blocks in the docs").hasSizeGreaterThanOrEqualTo(30);
		Map<Path, String> sources = sources(JAVA_SOURCES, ".java");
		return java.stream().map((snippet) -> DynamicTest.dynamicTest(snippet.location(), () -> {
			if (isSignatureList(snippet)) {
				checkSignatures(snippet);
			}
			else {
				checkExcerpt(snippet, JAVA_SOURCES, sources);
			}
		}));
	}

	@TestFactory
	Stream<DynamicTest> kotlinBlocksAreExcerptsOfCompiledSources() {
		List<DocSnippet> kotlin = snippets.stream()
			.filter((snippet) -> List.of("kotlin", "kt").contains(snippet.language()))
			.filter((snippet) -> !GRADLE_BLOCK.matcher(snippet.text()).find())
			.toList();
		assertThat(kotlin).as("Kotlin code blocks in the docs").hasSizeGreaterThanOrEqualTo(2);
		Map<Path, String> sources = sources(KOTLIN_SOURCES, ".kt");
		return kotlin.stream()
			.map((snippet) -> DynamicTest.dynamicTest(snippet.location(),
					() -> checkExcerpt(snippet, KOTLIN_SOURCES, sources)));
	}

	/**
	 * Fails unless the block appears in one of the sources, naming the first of its lines
	 * that no source has after the lines before it.
	 */
	private static void checkExcerpt(DocSnippet snippet, Path directory, Map<Path, String> sources) {
		List<String> lines = snippet.text().lines().toList();
		if (find(lines, sources) != null) {
			return;
		}
		int matched = 0;
		while (matched < lines.size() && find(lines.subList(0, matched + 1), sources) != null) {
			matched++;
		}
		String line = snippet.page().toString().replace('\\', '/') + ":" + (snippet.line() + 1 + matched);
		throw new AssertionError(snippet.location() + " is not an excerpt of any source under " + directory
				+ "; the first line that does not match is " + line + ": " + lines.get(matched).trim());
	}

	/** The source in which these lines appear, or null. */
	private static Path find(List<String> lines, Map<Path, String> sources) {
		Pattern excerpt = excerpt(String.join("\n", lines));
		for (Map.Entry<Path, String> source : sources.entrySet()) {
			if (excerpt.matcher(source.getValue()).find()) {
				return source.getKey();
			}
		}
		return null;
	}

	/** The block's text, every ellipsis matching any text (as little as it can). */
	private static Pattern excerpt(String text) {
		String[] parts = ELLIPSIS.split(collapse(text), -1);
		return Pattern.compile(Arrays.stream(parts).map(Pattern::quote).collect(Collectors.joining(".*?")));
	}

	private static String collapse(String text) {
		return WHITESPACE.matcher(text).replaceAll(" ").trim();
	}

	/** The sources of a directory, each with its whitespace collapsed. */
	private static Map<Path, String> sources(Path directory, String extension) {
		Map<Path, String> sources = new LinkedHashMap<>();
		try (Stream<Path> files = Files.walk(ROOT.resolve(directory))) {
			for (Path file : files.filter((path) -> path.toString().endsWith(extension)).sorted().toList()) {
				sources.put(ROOT.relativize(file), collapse(Files.readString(file, StandardCharsets.UTF_8)));
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		assertThat(sources).as("sources under %s", directory).isNotEmpty();
		return sources;
	}

	/** Whether every line of the block is a method signature, as the pages list them. */
	private static boolean isSignatureList(DocSnippet snippet) {
		List<String> lines = signatureLines(snippet);
		return !lines.isEmpty() && lines.stream().allMatch((line) -> SIGNATURE.matcher(line).matches());
	}

	/**
	 * Fails unless one of the listed types declares every signature of the block, naming
	 * the first signature that the type declaring most of them lacks.
	 */
	private static void checkSignatures(DocSnippet snippet) {
		List<String> lines = signatureLines(snippet);
		Class<?> closest = LISTED_TYPES.stream()
			.max(Comparator.comparingLong((type) -> lines.stream().filter(signatures(type)::contains).count()))
			.orElseThrow();
		Set<String> declared = signatures(closest);
		for (String line : lines) {
			if (!declared.contains(line)) {
				String name = line.substring(0, line.indexOf('(')).replaceAll(".* ", "");
				List<String> named = declared.stream()
					.filter((signature) -> signature.contains(" " + name + "("))
					.toList();
				throw new AssertionError(snippet.location() + " lists methods of " + closest.getSimpleName()
						+ ", which has no " + line + "; "
						+ (named.isEmpty() ? "nor any method of that name" : "its methods of that name: " + named));
			}
		}
	}

	/** The block's lines without comments, blank lines and runs of whitespace. */
	private static List<String> signatureLines(DocSnippet snippet) {
		return snippet.text()
			.lines()
			.map((line) -> collapse(line.replaceAll("//.*", "")))
			.filter((line) -> !line.isEmpty())
			.map((line) -> line.replaceAll(" ?, ?", ", "))
			.toList();
	}

	/** A type's public methods, written as the pages list them. */
	private static Set<String> signatures(Class<?> type) {
		return Arrays.stream(type.getMethods())
			.map(DocsJavaSnippetsTests::signature)
			.collect(Collectors.toCollection(TreeSet::new));
	}

	private static String signature(Method method) {
		List<String> parameters = new ArrayList<>();
		for (Parameter parameter : method.getParameters()) {
			parameters.add(simpleName(parameter.getParameterizedType().getTypeName()) + " " + parameter.getName());
		}
		return simpleName(method.getGenericReturnType().getTypeName()) + " " + method.getName() + "("
				+ String.join(", ", parameters) + ")";
	}

	private static String simpleName(String typeName) {
		String name = PACKAGE_PREFIX.matcher(typeName.replace("? extends ", "")).replaceAll("");
		return name.replace('$', '.');
	}

}
