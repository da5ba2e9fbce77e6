package dev.distlock.harness;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The command line of the harness's child JVMs: {@code key=value} arguments, read back as
 * settings. Factories ({@link ProviderFactory}, {@link ResourceFactory}) travel as class
 * names under a key and are instantiated in the child.
 */
public final class WorkerArgs {

	/** The key naming the {@link ProviderFactory} class. */
	public static final String PROVIDER = "provider";

	/** The key naming the {@link ResourceFactory} class. */
	public static final String RESOURCES = "resources";

	private WorkerArgs() {
	}

	/** {@code settings} as {@code key=value} arguments. */
	public static String[] of(Map<String, String> settings) {
		List<String> args = new ArrayList<>();
		settings.forEach((key, value) -> {
			if (key.contains("=")) {
				throw new IllegalArgumentException("A setting's key may not contain '=': " + key);
			}
			args.add(key + "=" + value);
		});
		return args.toArray(String[]::new);
	}

	/** Reads {@code key=value} arguments back; a malformed one is named in the error. */
	public static Map<String, String> parse(String[] args) {
		Map<String, String> settings = new LinkedHashMap<>();
		for (String arg : args) {
			int equals = arg.indexOf('=');
			if (equals <= 0) {
				throw new IllegalArgumentException("Expected key=value, got '" + arg + "'");
			}
			settings.put(arg.substring(0, equals), arg.substring(equals + 1));
		}
		return settings;
	}

	/** The setting under {@code key}; an error naming the key if it is missing. */
	public static String require(Map<String, String> settings, String key) {
		String value = settings.get(key);
		if (value == null) {
			throw new IllegalArgumentException("Missing setting '" + key + "' in " + settings);
		}
		return value;
	}

	/**
	 * The setting under {@code key} as a number; an error naming the key if it is not.
	 */
	public static long number(Map<String, String> settings, String key) {
		String value = require(settings, key);
		try {
			return Long.parseLong(value);
		}
		catch (NumberFormatException ex) {
			throw new IllegalArgumentException("Setting '" + key + "' is not a number: '" + value + "'", ex);
		}
	}

	/**
	 * A new instance of the class named under {@code key}, which must implement
	 * {@code type} and have a public no-argument constructor.
	 */
	public static <T> T instance(Map<String, String> settings, String key, Class<T> type) {
		String name = require(settings, key);
		Class<?> found;
		try {
			found = Class.forName(name);
		}
		catch (ClassNotFoundException ex) {
			throw new IllegalArgumentException("Setting '" + key + "': no class " + name + " on the class path", ex);
		}
		if (!type.isAssignableFrom(found)) {
			throw new IllegalArgumentException(
					"Setting '" + key + "': " + name + " does not implement " + type.getName());
		}
		return instance(found.asSubclass(type));
	}

	/** A new instance of {@code type}, through its public no-argument constructor. */
	public static <T> T instance(Class<T> type) {
		try {
			return type.getConstructor().newInstance();
		}
		catch (NoSuchMethodException | InstantiationException | IllegalAccessException ex) {
			throw new IllegalArgumentException(type.getName() + " needs a public no-argument constructor", ex);
		}
		catch (InvocationTargetException ex) {
			throw new IllegalStateException(type.getName() + " failed to construct", ex.getCause());
		}
	}

}
