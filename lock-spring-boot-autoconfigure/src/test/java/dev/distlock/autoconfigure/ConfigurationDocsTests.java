package dev.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.json.JsonParserFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keeps {@code docs/configuration.md} in step with the properties: the metadata that the
 * configuration processor generates from {@link DistributedLockProperties} is what IDEs
 * show, so the page's table must list exactly those keys, each with the same default.
 * Named option sets are a map, which the metadata lists as one entry; the page documents
 * one row per field of {@link DistributedLockProperties.Lock} instead.
 */
class ConfigurationDocsTests {

	private static final Path PAGE = Path.of("../docs/configuration.md");

	private static final String LOCKS = "distributed-lock.locks";

	private Map<String, Object> metadata;

	private Map<String, String> documented;

	@BeforeEach
	void read() throws IOException {
		this.metadata = metadataProperties();
		this.documented = table(Files.readAllLines(PAGE, StandardCharsets.UTF_8), "| key | default | meaning |");
	}

	@Test
	void everyPropertyIsDocumentedWithItsDefault() {
		assertThat(this.metadata).as("properties in the generated metadata").containsKey("distributed-lock.enabled");
		this.metadata.forEach((key, defaultValue) -> {
			if (key.equals(LOCKS)) {
				return;
			}
			assertThat(this.documented).as("rows of %s", PAGE).containsKey(key);
			String cell = this.documented.get(key);
			if (defaultValue != null) {
				assertThat(cell).as("default of %s in %s", key, PAGE).contains("`" + defaultValue + "`");
			}
			else {
				assertThat(cell).as("default of %s in %s", key, PAGE).isNotBlank();
			}
		});
	}

	@Test
	void everyFieldOfANamedOptionSetIsDocumentedWithItsFallback() {
		assertThat(this.metadata).containsKey(LOCKS);
		for (String field : lockFields()) {
			String key = LOCKS + ".<name>." + field;
			assertThat(this.documented).as("rows of %s", PAGE).containsKey(key);
			assertThat(this.documented.get(key)).as("default of %s in %s", key, PAGE)
				.isEqualTo("`distributed-lock." + field + "`");
			assertThat(this.metadata).as("the global property %s falls back to", key)
				.containsKey("distributed-lock." + field);
		}
	}

	@Test
	void thePageListsNoPropertyThatDoesNotExist() {
		Set<String> known = new TreeSet<>(this.metadata.keySet());
		lockFields().forEach((field) -> known.add(LOCKS + ".<name>." + field));
		known.remove(LOCKS);
		assertThat(this.documented.keySet()).as("rows of %s", PAGE).isSubsetOf(known);
	}

	@Test
	void renamedPropertiesPointFromKeysThatAreGoneToKeysThatExist() throws IOException {
		Map<String, String> renamed = table(Files.readAllLines(PAGE, StandardCharsets.UTF_8), "| old key | new key |");
		assertThat(renamed).isNotEmpty();
		renamed.forEach((oldKey, newKey) -> {
			assertThat(this.metadata).doesNotContainKey(oldKey);
			assertThat(this.metadata).containsKey(newKey.replace("`", ""));
		});
	}

	private static List<String> lockFields() {
		return Arrays.stream(DistributedLockProperties.Lock.class.getDeclaredFields())
			.filter((field) -> !Modifier.isStatic(field.getModifiers()))
			.map(Field::getName)
			.map(ConfigurationDocsTests::kebab)
			.toList();
	}

	private static String kebab(String camel) {
		return camel.replaceAll("([a-z0-9])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
	}

	/**
	 * The rows of the Markdown table under {@code header}: first cell (without backticks)
	 * to second cell (as written).
	 */
	private static Map<String, String> table(List<String> lines, String header) {
		int start = lines.indexOf(header);
		assertThat(start).as("a table headed %s in %s", header, PAGE).isNotNegative();
		Map<String, String> rows = new LinkedHashMap<>();
		for (String line : lines.subList(start + 2, lines.size())) {
			if (!line.startsWith("|")) {
				break;
			}
			String[] cells = line.split("\\|");
			String key = cells[1].trim().replace("`", "");
			assertThat(rows.put(key, cells[2].trim())).as("rows for %s", key).isNull();
		}
		return rows;
	}

	/**
	 * Every {@code distributed-lock.*} property in the metadata generated for this
	 * module, to its default ({@code null} when it has none), as the IDE shows it.
	 */
	private Map<String, Object> metadataProperties() throws IOException {
		List<Map<String, Object>> ours = new ArrayList<>();
		for (URL url : Collections
			.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				if (json.contains("\"distributed-lock")) {
					ours.add(JsonParserFactory.getJsonParser().parseMap(json));
				}
			}
		}
		assertThat(ours).as("generated metadata naming distributed-lock").hasSize(1);
		@SuppressWarnings("unchecked")
		List<Map<String, Object>> properties = (List<Map<String, Object>>) ours.get(0).get("properties");
		Map<String, Object> defaults = new LinkedHashMap<>();
		properties.stream()
			.filter((property) -> ((String) property.get("name")).startsWith("distributed-lock."))
			// Renamed keys stay in the metadata only to point IDEs and Boot's properties
			// migrator at their replacements; the page lists them in its renamed table.
			.filter((property) -> property.get("deprecation") == null)
			.forEach((property) -> defaults.put((String) property.get("name"), text(property.get("defaultValue"))));
		return defaults;
	}

	/**
	 * A default as the metadata writes it; the parser may read a whole number as a
	 * double.
	 */
	private static Object text(Object value) {
		if (value instanceof Number number && number.doubleValue() == Math.rint(number.doubleValue())) {
			return Long.toString(number.longValue());
		}
		return value;
	}

}
