package dev.distlock.autoconfigure;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Element;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps the build and configuration snippets of the user documentation ({@code README.md}
 * and {@code docs/**.md}) working as written.
 * <ul>
 * <li>Every {@code xml} snippet that declares dependencies names modules of this build
 * (with this build's version, or on a page that says the version comes from
 * {@code lock-bom}), and all of them together resolve in an offline Maven build, each as
 * a Spring Boot application would declare it.</li>
 * <li>Every Gradle snippet names modules of this build, with this build's version or
 * through the BOM.</li>
 * <li>Every {@code yaml}, {@code yml} and {@code properties} snippet parses, binds
 * strictly to distlock's properties classes, and uses only Spring Boot properties that
 * exist, with values of their type.</li>
 * </ul>
 */
@Tag("slow")
class DocsSnippetsTests {

	private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

	private static final Pattern GRADLE_COORDINATES = Pattern.compile("\"([\\w.-]+):([\\w.-]+)(?::([\\w.-]+))?\"");

	private static List<DocSnippet> snippets;

	private static DocSnippetReactor reactor;

	@BeforeAll
	static void read() throws Exception {
		snippets = DocSnippet.readAll(ROOT);
		reactor = DocSnippetReactor.read(ROOT);
	}

	@Test
	void theUsagePageShowsTheBomImportThatOtherPagesLinkTo() throws Exception {
		DocSnippet bom = bomImport();
		List<Element> imports = DocSnippetReactor.dependencies(
				DocSnippetReactor.child(DocSnippetReactor.child(root(bom), "dependencyManagement"), "dependencies"));
		assertThat(imports).as("the BOM import in %s", bom.location()).hasSize(1);
		Element dependency = imports.get(0);
		assertThat(DocSnippetReactor.text(dependency, "groupId")).isEqualTo(DocSnippetReactor.GROUP);
		assertThat(DocSnippetReactor.text(dependency, "artifactId")).isEqualTo("lock-bom");
		assertThat(DocSnippetReactor.text(dependency, "version")).isEqualTo(reactor.version());
		assertThat(DocSnippetReactor.text(dependency, "type")).isEqualTo("pom");
		assertThat(DocSnippetReactor.text(dependency, "scope")).isEqualTo("import");
		assertThat(snippets).as("snippets on pages that rely on the BOM").anyMatch(DocSnippet::bomNoted);
		assertThat(snippets).as("BOM imports shown in the README")
			.anyMatch((snippet) -> snippet.page().equals(Path.of("README.md")) && importsTheBom(snippet));
	}

	@TestFactory
	Stream<DynamicTest> dependencySnippetsNameThisBuildsModulesWithItsVersion() {
		List<DocSnippet> xml = dependencySnippets();
		assertThat(xml).as("dependency snippets in the docs").hasSizeGreaterThanOrEqualTo(8);
		return xml.stream().map((snippet) -> DynamicTest.dynamicTest(snippet.toString(), () -> checkVersions(snippet)));
	}

	@Test
	void dependencySnippetsResolveInAMavenBuild(@TempDir Path directory) throws Exception {
		DocSnippetBuild build = new DocSnippetBuild(reactor, directory);
		List<Element> bomImport = management(root(bomImport()));
		for (DocSnippet snippet : dependencySnippets()) {
			Element root = root(snippet);
			List<Element> management = new ArrayList<>(management(root));
			if (management.isEmpty() && snippet.bomNoted()) {
				management.addAll(bomImport);
			}
			build.add(projectName(snippet), management, declared(root));
		}
		DocSnippetBuild.Result result = build.run();
		assertThat(result.exitCode()).as("Maven's exit code; it said:%n%s", result.output()).isZero();
	}

	@TestFactory
	Stream<DynamicTest> gradleSnippetsNameThisBuildsModulesWithItsVersion() {
		List<DocSnippet> gradle = snippets.stream()
			.filter((snippet) -> List.of("kotlin", "groovy", "gradle").contains(snippet.language()))
			.filter((snippet) -> snippet.text().contains(DocSnippetReactor.GROUP + ":"))
			.toList();
		assertThat(gradle).as("Gradle snippets in the docs").isNotEmpty();
		return gradle.stream().map((snippet) -> DynamicTest.dynamicTest(snippet.toString(), () -> {
			boolean platform = snippet.text().contains("platform(\"" + DocSnippetReactor.GROUP + ":lock-bom:");
			Matcher coordinates = GRADLE_COORDINATES.matcher(snippet.text());
			while (coordinates.find()) {
				checkCoordinates(snippet, coordinates.group(1), coordinates.group(2), coordinates.group(3),
						platform || snippet.bomNoted());
			}
		}));
	}

	@TestFactory
	Stream<DynamicTest> configurationSnippetsBindToTheProperties() {
		DocSnippetProperties properties = new DocSnippetProperties();
		List<DocSnippet> configuration = snippets.stream()
			.filter((snippet) -> List.of("yaml", "yml", "properties").contains(snippet.language()))
			.toList();
		assertThat(configuration).as("configuration snippets in the docs").hasSizeGreaterThanOrEqualTo(10);
		return configuration.stream().map((snippet) -> DynamicTest.dynamicTest(snippet.toString(), () -> {
			try {
				assertThat(properties.check(snippet)).as("keys of %s", snippet).isNotEmpty();
			}
			catch (Exception ex) {
				throw new AssertionError(snippet + ": " + ex.getMessage() + causes(ex), ex);
			}
		}));
	}

	private static void checkVersions(DocSnippet snippet) throws Exception {
		Element root = root(snippet);
		boolean bom = importsTheBom(snippet) || snippet.bomNoted();
		for (Element dependency : allDependencies(root)) {
			String version = DocSnippetReactor.text(dependency, "version");
			if ("import".equals(DocSnippetReactor.text(dependency, "scope"))) {
				assertThat(version).as("version of the import in %s", snippet).isNotNull();
			}
			checkCoordinates(snippet, DocSnippetReactor.text(dependency, "groupId"),
					DocSnippetReactor.text(dependency, "artifactId"), version, bom);
		}
	}

	/**
	 * Our artifacts must be modules of this build, with its version or through the BOM; a
	 * third-party version shown must be the one this build uses, where it names one.
	 */
	private static void checkCoordinates(DocSnippet snippet, String groupId, String artifactId, String version,
			boolean bom) {
		String coordinates = groupId + ":" + artifactId;
		if (!DocSnippetReactor.GROUP.equals(groupId)) {
			String ours = reactor.managed().get(coordinates);
			if (version != null && ours != null) {
				assertThat(version).as("version of %s in %s, as this build uses it", coordinates, snippet)
					.isEqualTo(ours);
			}
			return;
		}
		assertThat(reactor.modules()).as("modules of this build, named by %s", snippet).containsKey(artifactId);
		if (version != null) {
			assertThat(version).as("version of %s in %s", coordinates, snippet).isEqualTo(reactor.version());
		}
		else {
			assertThat(bom)
				.as("%s has no version in %s, so a paragraph before it must say that versions come from"
						+ " `lock-bom`, linking to %s", coordinates, snippet, DocSnippet.BOM_SECTION)
				.isTrue();
		}
	}

	private static List<DocSnippet> dependencySnippets() {
		return snippets.stream()
			.filter((snippet) -> snippet.language().equals("xml") && snippet.text().contains("<dependency>"))
			.toList();
	}

	/** The first snippet of the section that pages link to for the BOM import. */
	private static DocSnippet bomImport() {
		String page = "docs/" + DocSnippet.BOM_SECTION.substring(0, DocSnippet.BOM_SECTION.indexOf('#'));
		return snippets.stream()
			.filter((snippet) -> snippet.page().equals(Path.of(page)) && importsTheBom(snippet))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No snippet of " + page + " imports lock-bom"));
	}

	private static boolean importsTheBom(DocSnippet snippet) {
		if (!snippet.language().equals("xml")) {
			return false;
		}
		try {
			return management(root(snippet)).stream()
				.anyMatch((dependency) -> "lock-bom".equals(DocSnippetReactor.text(dependency, "artifactId"))
						&& "import".equals(DocSnippetReactor.text(dependency, "scope")));
		}
		catch (Exception ex) {
			throw new AssertionError("Snippet " + snippet + " is not XML", ex);
		}
	}

	/** The snippet as one element: snippets often hold several elements side by side. */
	private static Element root(DocSnippet snippet) throws Exception {
		return DocSnippetReactor.parse("<snippet>\n" + snippet.text() + "</snippet>").getDocumentElement();
	}

	private static List<Element> management(Element root) {
		return DocSnippetReactor.dependencies(
				DocSnippetReactor.child(DocSnippetReactor.child(root, "dependencyManagement"), "dependencies"));
	}

	/** The dependencies the snippet declares, in a dependencies element or bare. */
	private static List<Element> declared(Element root) {
		Element dependencies = DocSnippetReactor.child(root, "dependencies");
		return DocSnippetReactor.dependencies((dependencies != null) ? dependencies : root);
	}

	private static List<Element> allDependencies(Element root) {
		List<Element> all = new ArrayList<>(management(root));
		all.addAll(declared(root));
		return all;
	}

	/** Boot's bind failures name the key in the cause. */
	private static String causes(Throwable ex) {
		StringBuilder causes = new StringBuilder();
		for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause()) {
			causes.append("; ").append(cause.getMessage());
		}
		return causes.toString();
	}

	private static String projectName(DocSnippet snippet) {
		return snippet.location().replaceAll("[^A-Za-z0-9]+", "-");
	}

}
