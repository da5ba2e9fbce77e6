package dev.distlock.autoconfigure;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import javax.xml.transform.OutputKeys;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.dom.DOMSource;
import javax.xml.transform.stream.StreamResult;

import org.w3c.dom.Document;
import org.w3c.dom.Element;

import org.springframework.boot.SpringApplication;

/**
 * Builds every dependency snippet as a user's Maven build would: one small project per
 * snippet (a Spring Boot application's dependency management, the snippet's dependencies,
 * and the {@code lock-bom} import of the usage page when the snippet's page relies on
 * it), all resolved by one Maven run (offline when the build is) up to
 * {@code test-compile}, which resolves every dependency of every scope.
 * <p>
 * This build's artifacts are not installed while it runs (and the modules after this one
 * are not even packaged yet), so the run gets a local repository of its own holding this
 * build's POMs as they are, each module's jar stood in by an empty one: what the run
 * checks is the model and the dependency graph, not our classes. Everything else comes
 * from the local repository this build resolved from, read-only (Maven's
 * {@code maven.repo.local.tail}).
 */
final class DocSnippetBuild {

	private final DocSnippetReactor reactor;

	private final Path directory;

	private final List<String> projects = new ArrayList<>();

	DocSnippetBuild(DocSnippetReactor reactor, Path directory) {
		this.reactor = reactor;
		this.directory = directory;
	}

	/**
	 * Adds the project of one snippet.
	 * @param name the project's artifact id
	 * @param management the {@code dependency} elements to manage beside Spring Boot's
	 * @param dependencies the {@code dependency} elements the project declares
	 */
	void add(String name, List<Element> management, List<Element> dependencies) throws Exception {
		Document pom = DocSnippetReactor.parse("""
				<project>
				  <modelVersion>4.0.0</modelVersion>
				  <groupId>docs.snippets</groupId>
				  <artifactId>%s</artifactId>
				  <version>1</version>
				  <properties>
				    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
				  </properties>
				  <dependencyManagement>
				    <dependencies>
				      <dependency>
				        <groupId>org.springframework.boot</groupId>
				        <artifactId>spring-boot-dependencies</artifactId>
				        <version>%s</version>
				        <type>pom</type>
				        <scope>import</scope>
				      </dependency>
				    </dependencies>
				  </dependencyManagement>
				  <dependencies/>
				  <build>
				    <pluginManagement>
				      <plugins>
				        <plugin>
				          <groupId>org.apache.maven.plugins</groupId>
				          <artifactId>maven-compiler-plugin</artifactId>
				          <version>%s</version>
				        </plugin>
				        <plugin>
				          <groupId>org.apache.maven.plugins</groupId>
				          <artifactId>maven-resources-plugin</artifactId>
				          <version>%s</version>
				        </plugin>
				      </plugins>
				    </pluginManagement>
				  </build>
				</project>
				""".formatted(name, this.reactor.property("spring-boot.version"),
				this.reactor.property("maven-compiler-plugin.version"),
				this.reactor.property("maven-resources-plugin.version")));
		Element project = pom.getDocumentElement();
		Element managed = DocSnippetReactor.child(DocSnippetReactor.child(project, "dependencyManagement"),
				"dependencies");
		management.forEach((dependency) -> managed.appendChild(pom.importNode(dependency, true)));
		Element declared = DocSnippetReactor.child(project, "dependencies");
		dependencies.forEach((dependency) -> declared.appendChild(pom.importNode(dependency, true)));
		write(pom, this.directory.resolve("projects").resolve(name).resolve("pom.xml"));
		this.projects.add(name);
	}

	/** Runs Maven over every project added; returns its exit code and output. */
	Result run() throws Exception {
		Path repository = this.directory.resolve("repository");
		installReactor(repository);
		Path aggregator = aggregator();
		List<String> command = new ArrayList<>(maven());
		// Online unless the build is offline: on a fresh machine the snippets name a few
		// artifacts that no module of the build has fetched yet.
		if (offline()) {
			command.add("-o");
		}
		command.addAll(List.of("-B", "-q", "-fae", "-Dmaven.repo.local=" + repository,
				"-Dmaven.repo.local.tail=" + buildRepository(), "-f", aggregator.toString(), "test-compile"));
		ProcessBuilder builder = new ProcessBuilder(command).directory(aggregator.getParent().toFile())
			.redirectErrorStream(true)
			.redirectOutput(this.directory.resolve("maven.log").toFile());
		builder.environment().remove("MAVEN_ARGS");
		Process process = builder.start();
		if (!process.waitFor(10, TimeUnit.MINUTES)) {
			process.destroyForcibly();
			throw new IllegalStateException("Maven did not finish within 10 minutes: " + command);
		}
		String output = Files.readString(this.directory.resolve("maven.log"), StandardCharsets.UTF_8);
		return new Result(process.exitValue(), String.join(" ", command) + "\n" + output);
	}

	/** Whether the Maven run that runs this test is offline ({@code -o}). */
	private static boolean offline() {
		String arguments = System.getenv("MAVEN_CMD_LINE_ARGS");
		return arguments != null && List.of(arguments.trim().split("\\s+"))
			.stream()
			.anyMatch((argument) -> argument.equals("-o") || argument.equals("--offline"));
	}

	private Path aggregator() throws Exception {
		StringBuilder modules = new StringBuilder();
		this.projects.forEach((name) -> modules.append("<module>").append(name).append("</module>"));
		Document pom = DocSnippetReactor.parse("""
				<project>
				  <modelVersion>4.0.0</modelVersion>
				  <groupId>docs.snippets</groupId>
				  <artifactId>all</artifactId>
				  <version>1</version>
				  <packaging>pom</packaging>
				  <modules>%s</modules>
				</project>
				""".formatted(modules));
		Path file = this.directory.resolve("projects").resolve("pom.xml");
		write(pom, file);
		return file;
	}

	/**
	 * Puts this build's POMs, and an empty jar for each module that packages one, where
	 * {@code mvn install} would have put them.
	 */
	private void installReactor(Path repository) throws IOException {
		String version = this.reactor.version();
		for (Map.Entry<String, DocSnippetReactor.Module> module : this.reactor.modules().entrySet()) {
			String artifactId = module.getKey();
			Path target = repository.resolve(DocSnippetReactor.GROUP.replace('.', '/'))
				.resolve(artifactId)
				.resolve(version);
			Files.createDirectories(target);
			Files.copy(module.getValue().directory().resolve("pom.xml"),
					target.resolve(artifactId + "-" + version + ".pom"));
			if (!module.getValue().packaging().equals("pom")) {
				emptyJar(target.resolve(artifactId + "-" + version + ".jar"));
			}
		}
	}

	private static void emptyJar(Path file) throws IOException {
		Manifest manifest = new Manifest();
		manifest.getMainAttributes().putValue("Manifest-Version", "1.0");
		try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, manifest)) {
			jar.finish();
		}
	}

	/**
	 * The Maven that runs this build when it says where it is, else the repository's
	 * wrapper.
	 */
	private List<String> maven() {
		String home = System.getProperty("maven.home");
		if (home != null && Files.isExecutable(Path.of(home, "bin", "mvn"))) {
			return List.of(Path.of(home, "bin", "mvn").toString());
		}
		boolean windows = System.getProperty("os.name").startsWith("Windows");
		return List.of(this.reactor.root().resolve(windows ? "mvnw.cmd" : "mvnw").toString());
	}

	/**
	 * The local repository this build resolved from: where the jar of a class on the test
	 * class path lives, above its group, artifact and version directories.
	 */
	private static Path buildRepository() throws Exception {
		Path jar = Path.of(SpringApplication.class.getProtectionDomain().getCodeSource().getLocation().toURI());
		Path repository = jar;
		for (int level = 0; level < "org.springframework.boot".split("\\.").length + 3; level++) {
			repository = repository.getParent();
		}
		if (!Files.isDirectory(repository.resolve("org/springframework/boot/spring-boot"))) {
			throw new IllegalStateException("Spring Boot's jar is not in a Maven repository: " + jar);
		}
		return repository;
	}

	private static void write(Document pom, Path file) throws Exception {
		Files.createDirectories(file.getParent());
		var transformer = TransformerFactory.newInstance().newTransformer();
		transformer.setOutputProperty(OutputKeys.INDENT, "yes");
		try (OutputStream out = Files.newOutputStream(file)) {
			transformer.transform(new DOMSource(pom), new StreamResult(out));
		}
	}

	/**
	 * How the Maven run ended.
	 *
	 * @param exitCode the process's exit code
	 * @param output the command and everything Maven printed
	 */
	record Result(int exitCode, String output) {

	}

}
