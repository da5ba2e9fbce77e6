package dev.distlock.autoconfigure;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

/**
 * What this build's own POMs say: the project version, the modules (the artifacts a user
 * can name), and the versions the build gives third-party artifacts.
 *
 * @param root the repository root
 * @param version the project version
 * @param properties the root POM's properties
 * @param modules each module's artifact id to its directory and packaging
 * @param managed the root POM's managed versions, {@code groupId:artifactId} to version
 */
record DocSnippetReactor(Path root, String version, Map<String, String> properties, Map<String, Module> modules,
		Map<String, String> managed) {

	static final String GROUP = "dev.distlock";

	private static final Pattern PROPERTY = Pattern.compile("\\$\\{([^}]+)}");

	/** Reads the root POM and the POM of every module it lists. */
	static DocSnippetReactor read(Path root) throws Exception {
		Element project = parse(root.resolve("pom.xml")).getDocumentElement();
		String version = text(project, "version");
		Map<String, String> properties = new LinkedHashMap<>();
		for (Element property : children(child(project, "properties"))) {
			properties.put(property.getTagName(), property.getTextContent().trim());
		}
		properties.put("project.version", version);
		Map<String, Module> modules = new LinkedHashMap<>();
		modules.put(text(project, "artifactId"), new Module(root, "pom"));
		for (Element module : children(child(project, "modules"))) {
			Path directory = root.resolve(module.getTextContent().trim());
			Element pom = parse(directory.resolve("pom.xml")).getDocumentElement();
			String packaging = text(pom, "packaging");
			modules.put(text(pom, "artifactId"), new Module(directory, (packaging != null) ? packaging : "jar"));
		}
		Map<String, String> managed = new LinkedHashMap<>();
		for (Element dependency : dependencies(child(child(project, "dependencyManagement"), "dependencies"))) {
			managed.put(text(dependency, "groupId") + ":" + text(dependency, "artifactId"),
					resolve(text(dependency, "version"), properties));
		}
		return new DocSnippetReactor(root, version, properties, modules, managed);
	}

	/** A property of the root POM, which must be there. */
	String property(String name) {
		String value = this.properties.get(name);
		if (value == null) {
			throw new IllegalStateException("The root POM has no property " + name);
		}
		return value;
	}

	static Document parse(Path file) throws Exception {
		return parse(Files.readString(file, StandardCharsets.UTF_8));
	}

	static Document parse(String xml) throws Exception {
		DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
		factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
		return factory.newDocumentBuilder().parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
	}

	/** The element children of {@code parent} (none for a missing parent). */
	static List<Element> children(Element parent) {
		List<Element> children = new ArrayList<>();
		if (parent != null) {
			for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
				if (node instanceof Element element) {
					children.add(element);
				}
			}
		}
		return children;
	}

	static List<Element> dependencies(Element parent) {
		return children(parent).stream().filter((child) -> child.getTagName().equals("dependency")).toList();
	}

	static Element child(Element parent, String name) {
		return children(parent).stream().filter((child) -> child.getTagName().equals(name)).findFirst().orElse(null);
	}

	static String text(Element parent, String name) {
		Element child = child(parent, name);
		return (child != null) ? child.getTextContent().trim() : null;
	}

	private static String resolve(String value, Map<String, String> properties) {
		if (value == null) {
			return null;
		}
		Matcher matcher = PROPERTY.matcher(value);
		StringBuilder resolved = new StringBuilder();
		while (matcher.find()) {
			matcher.appendReplacement(resolved,
					Matcher.quoteReplacement(properties.getOrDefault(matcher.group(1), matcher.group())));
		}
		return matcher.appendTail(resolved).toString();
	}

	/**
	 * A module of the build.
	 *
	 * @param directory where its POM is
	 * @param packaging its packaging ({@code jar} unless the POM says otherwise)
	 */
	record Module(Path directory, String packaging) {

	}

}
