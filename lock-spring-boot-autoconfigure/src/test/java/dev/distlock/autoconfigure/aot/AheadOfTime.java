package dev.distlock.autoconfigure.aot;

import java.util.function.Consumer;

import dev.distlock.spi.LockProvider;

import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.test.tools.TestCompiler;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs an application in AOT mode, as a build with Boot's {@code process-aot} would start
 * it on the JVM: Spring's AOT pass over the application's configuration (configuration
 * properties unbound, no bean instantiated), a compilation of what it generated, then a
 * start from the generated initializer with {@code spring.aot.enabled}, where the bean
 * definitions, proxies and conditions are those of the build. No native image is built.
 * The test class must be annotated {@code @CompileWithForkedClassLoader}, so that the
 * generated code can reach package-private configuration.
 */
final class AheadOfTime {

	private AheadOfTime() {
	}

	/** {@code common} and {@code more}, as one array of properties. */
	static String[] with(String[] common, String... more) {
		return java.util.stream.Stream.concat(java.util.Arrays.stream(common), java.util.Arrays.stream(more))
			.toArray(String[]::new);
	}

	/**
	 * Processes {@code application} with {@code properties} ahead of time, then starts it
	 * from the generated code with the same properties and gives it to {@code check}.
	 */
	static void run(Class<?> application, String[] properties, Consumer<GenericApplicationContext> check) {
		TestGenerationContext generation = new TestGenerationContext(application);
		ClassName initializer;
		try (AnnotationConfigApplicationContext build = new AnnotationConfigApplicationContext()) {
			TestPropertyValues.of(properties).applyTo(build);
			build.register(application);
			initializer = new ApplicationContextAotGenerator().processAheadOfTime(build, generation);
			// At build time there is no configuration to connect with: the pass must not
			// create a store (on a class path with an embedded database, one could be
			// created silently).
			assertThat(build.getBeanFactory().getBeanNamesForType(LockProvider.class, true, false))
				.as("lock stores created by the AOT pass")
				.noneMatch(build.getBeanFactory()::containsSingleton);
		}
		generation.writeGeneratedContent();
		TestCompiler.forSystem().with(generation).compile((compiled) -> {
			@SuppressWarnings("unchecked")
			ApplicationContextInitializer<GenericApplicationContext> generated = compiled
				.getInstance(ApplicationContextInitializer.class, initializer.reflectionName());
			String previous = System.setProperty("spring.aot.enabled", "true");
			try (GenericApplicationContext context = new GenericApplicationContext()) {
				TestPropertyValues.of(properties).applyTo(context);
				generated.initialize(context);
				context.refresh();
				check.accept(context);
			}
			finally {
				if (previous == null) {
					System.clearProperty("spring.aot.enabled");
				}
				else {
					System.setProperty("spring.aot.enabled", previous);
				}
			}
		});
	}

}
