package dev.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import dev.distlock.OnLeaseLost;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.Show;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.sql.init.DatabaseInitializationMode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The IDE offers the allowed values of every property whose values are a fixed set: the
 * value hints in the configuration metadata the build generates list exactly the values
 * the code accepts.
 */
class ConfigurationMetadataHintsTests {

	private Map<String, Object> metadata;

	@BeforeEach
	void read() throws IOException {
		for (URL url : Collections
			.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
			try (InputStream in = url.openStream()) {
				String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
				if (json.contains("\"distributed-lock")) {
					this.metadata = JsonParserFactory.getJsonParser().parseMap(json);
				}
			}
		}
		assertThat(this.metadata).as("generated metadata naming distributed-lock").isNotNull();
	}

	@Test
	void theStoreHintsListEveryStoreTheSelectionAccepts() {
		assertThat(hintedValues("distributed-lock.store")).isEqualTo(StoreSelectionCheck.KNOWN)
			.contains("redis", "jdbc", "zookeeper", "in-memory");
	}

	@Test
	void enumPropertiesHintTheirValuesAsTheyAreWritten() {
		assertThat(hintedValues("distributed-lock.on-lease-lost")).isEqualTo(written(OnLeaseLost.values()));
		assertThat(hintedValues("distributed-lock.jdbc.initialize-schema"))
			.isEqualTo(written(DatabaseInitializationMode.values()));
		assertThat(hintedValues("management.endpoint.distributedlocks.show-values")).isEqualTo(written(Show.values()));
	}

	@Test
	void everyHintIsForAPropertyAndDescribesEachValue() {
		@SuppressWarnings("unchecked")
		Set<String> properties = ((List<Map<String, Object>>) this.metadata.get("properties")).stream()
			.map((property) -> (String) property.get("name"))
			.collect(Collectors.toSet());
		hints().forEach((hint) -> {
			assertThat(properties).contains((String) hint.get("name"));
			values(hint).forEach((value) -> assertThat((String) value.get("description")).as("%s", value).isNotBlank());
		});
	}

	private Set<String> hintedValues(String property) {
		Map<String, Object> hint = hints().stream()
			.filter((candidate) -> property.equals(candidate.get("name")))
			.findFirst()
			.orElseThrow(() -> new AssertionError("No value hint for " + property));
		return values(hint).stream().map((value) -> (String) value.get("value")).collect(Collectors.toSet());
	}

	@SuppressWarnings("unchecked")
	private List<Map<String, Object>> hints() {
		List<Map<String, Object>> hints = (List<Map<String, Object>>) this.metadata.get("hints");
		assertThat(hints).as("value hints").isNotEmpty();
		return hints;
	}

	@SuppressWarnings("unchecked")
	private static List<Map<String, Object>> values(Map<String, Object> hint) {
		return (List<Map<String, Object>>) hint.get("values");
	}

	/** Enum constants as a property value is written: lower case, hyphens. */
	private static Set<String> written(Enum<?>[] constants) {
		return Arrays.stream(constants)
			.map((constant) -> constant.name().toLowerCase(Locale.ROOT).replace('_', '-'))
			.collect(Collectors.toSet());
	}

}
