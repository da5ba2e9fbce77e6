package dev.distlock.autoconfigure;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.distlock.autoconfigure.endpoint.DistributedLocksEndpointProperties;
import dev.distlock.autoconfigure.jdbc.DistributedLockJdbcFenceProperties;
import dev.distlock.autoconfigure.jdbc.DistributedLockJdbcProperties;
import dev.distlock.autoconfigure.leader.DistributedLockLeaderProperties;
import dev.distlock.autoconfigure.redis.DistributedLockRedLockProperties;
import dev.distlock.autoconfigure.zookeeper.DistributedLockZookeeperProperties;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.env.PropertiesPropertySourceLoader;
import org.springframework.boot.env.PropertySourceLoader;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.core.env.PropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * Checks a configuration snippet as Spring Boot would read it. Keys under
 * {@code distributed-lock} (and the endpoint's) are bound to the properties class that
 * owns them, strictly: a key no class binds fails, and so does a value that does not
 * convert or that the option resolver refuses. Every other key must be a property of
 * Spring Boot's configuration metadata (or lie under one that is a map), and its value
 * must convert to the property's type.
 */
final class DocSnippetProperties {

	/** Ours, each bound at its own prefix; a key goes to the longest prefix above it. */
	private static final List<Class<?>> OURS = List.of(DistributedLockProperties.class,
			DistributedLockJdbcProperties.class, DistributedLockJdbcFenceProperties.class,
			DistributedLockZookeeperProperties.class, DistributedLockRedLockProperties.class,
			DistributedLocksEndpointProperties.class, DistributedLockLeaderProperties.class);

	private static final ConfigurationPropertyName DISTRIBUTED_LOCK = ConfigurationPropertyName.of("distributed-lock");

	private final Map<String, String> metadata = metadataTypes();

	/**
	 * Reads the snippet as {@code application.yml} or {@code application.properties} and
	 * checks every key; throws, naming the key, at the first problem.
	 * @return the keys it found
	 */
	List<ConfigurationPropertyName> check(DocSnippet snippet) throws Exception {
		PropertySourceLoader loader = snippet.language().equals("properties") ? new PropertiesPropertySourceLoader()
				: new YamlPropertySourceLoader();
		List<ConfigurationPropertyName> names = new ArrayList<>();
		for (PropertySource<?> document : loader.load(snippet.location(),
				new ByteArrayResource(snippet.text().getBytes(StandardCharsets.UTF_8)))) {
			names.addAll(check((IterableConfigurationPropertySource) ConfigurationPropertySource.from(document)));
		}
		return names;
	}

	private List<ConfigurationPropertyName> check(IterableConfigurationPropertySource source) {
		Map<Class<?>, MapConfigurationPropertySource> ours = new LinkedHashMap<>();
		List<ConfigurationPropertyName> names = new ArrayList<>();
		for (ConfigurationPropertyName name : source) {
			names.add(name);
			Class<?> owner = owner(name);
			if (owner != null) {
				ours.computeIfAbsent(owner, (type) -> new MapConfigurationPropertySource())
					.put(name, source.getConfigurationProperty(name).getValue());
			}
			else if (DISTRIBUTED_LOCK.isAncestorOf(name)) {
				throw new IllegalArgumentException(
						name + " is under distributed-lock, but no properties class owns it");
			}
			else {
				checkBootProperty(source, name);
			}
		}
		ours.forEach(DocSnippetProperties::bindStrictly);
		return names;
	}

	/**
	 * Binds the keys of one class; unknown keys and values that do not convert throw
	 * Boot's own exceptions, which name the key.
	 */
	private static void bindStrictly(Class<?> type, MapConfigurationPropertySource keys) {
		Object bound = new Binder(keys).bindOrCreate(prefix(type), Bindable.of(type),
				new NoUnboundElementsBindHandler(BindHandler.DEFAULT));
		if (bound instanceof DistributedLockProperties properties) {
			new LockOptionsResolver(properties);
		}
	}

	private static Class<?> owner(ConfigurationPropertyName name) {
		Class<?> owner = null;
		int longest = -1;
		for (Class<?> type : OURS) {
			ConfigurationPropertyName prefix = ConfigurationPropertyName.of(prefix(type));
			if (prefix.isAncestorOf(name) && prefix.getNumberOfElements() > longest) {
				owner = type;
				longest = prefix.getNumberOfElements();
			}
		}
		return owner;
	}

	private static String prefix(Class<?> type) {
		ConfigurationProperties annotation = type.getAnnotation(ConfigurationProperties.class);
		return annotation.prefix().isEmpty() ? annotation.value() : annotation.prefix();
	}

	/**
	 * A key that is not ours must be in Boot's metadata, and its value must bind to the
	 * type the metadata gives it.
	 */
	private void checkBootProperty(IterableConfigurationPropertySource source, ConfigurationPropertyName name) {
		String key = name.toString().replaceAll("\\[\\d+]", "");
		String type = this.metadata.get(key);
		if (type == null) {
			ConfigurationPropertyName parent = ConfigurationPropertyName.of(key).getParent();
			while (!parent.isEmpty()) {
				String parentType = this.metadata.get(parent.toString());
				if (parentType != null && parentType.startsWith("java.util.Map<")) {
					return;
				}
				parent = parent.getParent();
			}
			throw new IllegalArgumentException(name + " is not a property in Spring Boot's configuration metadata");
		}
		Bindable<?> bindable = bindable(type);
		if (bindable != null) {
			new Binder(source).bind(key, bindable);
		}
	}

	/** How to bind a value of the metadata's type, or null for a type left unchecked. */
	private static Bindable<?> bindable(String type) {
		try {
			if (type.matches("java\\.util\\.(List|Collection)<[\\w.$]+>")) {
				return Bindable.listOf(Class.forName(type.substring(type.indexOf('<') + 1, type.length() - 1)));
			}
			if (type.matches("java\\.util\\.Set<[\\w.$]+>")) {
				return Bindable.setOf(Class.forName(type.substring(type.indexOf('<') + 1, type.length() - 1)));
			}
			return type.contains("<") ? null : Bindable.of(Class.forName(type));
		}
		catch (ClassNotFoundException ex) {
			return null;
		}
	}

	/**
	 * Every property in the configuration metadata on the test class path (Spring Boot's
	 * modules and this one), to its type.
	 */
	@SuppressWarnings("unchecked")
	private static Map<String, String> metadataTypes() {
		Map<String, String> types = new LinkedHashMap<>();
		try {
			for (URL url : Collections.list(DocSnippetProperties.class.getClassLoader()
				.getResources("META-INF/spring-configuration-metadata.json"))) {
				try (InputStream in = url.openStream()) {
					Map<String, Object> json = JsonParserFactory.getJsonParser()
						.parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
					for (Map<String, Object> property : (List<Map<String, Object>>) json.getOrDefault("properties",
							List.of())) {
						types.put((String) property.get("name"), String.valueOf(property.get("type")));
					}
				}
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		return types;
	}

}
