package dev.distlock.autoconfigure.aot;

import dev.distlock.DistributedLock;
import dev.distlock.aop.LockExpressionRootObject;
import dev.distlock.autoconfigure.endpoint.DistributedLocksEndpoint;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.aot.test.generate.TestGenerationContext;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.ApplicationContextAotGenerator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Ahead-of-time processing of an application that uses {@code @DistributedLock}, as the
 * native-image build runs it (without {@code native-image} itself): the runtime hints
 * cover what is reached by reflection at run time, the key expression's root object, the
 * annotation's attributes, the annotated method (SpEL reads its parameter names), and the
 * endpoint's answer (serialised by Jackson).
 */
@Tag("slow")
class NativeHintsTests {

	@Test
	void aotProcessingRegistersWhatIsReachedByReflection() {
		RuntimeHints hints = processAheadOfTime();
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(LockExpressionRootObject.class)
			.withMemberCategory(MemberCategory.INVOKE_PUBLIC_METHODS)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection()
			.onType(DistributedLock.class)
			.withMemberCategory(MemberCategory.INVOKE_DECLARED_METHODS)).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(Orders.class, "ship")).accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onMethodInvocation(DistributedLocksEndpoint.class, "locks"))
			.accepts(hints);
		assertThat(RuntimeHintsPredicates.reflection().onType(DistributedLocksEndpoint.LocksDescriptor.class))
			.accepts(hints);
	}

	private static RuntimeHints processAheadOfTime() {
		try (AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext()) {
			TestPropertyValues
				.of("distributed-lock.store=in-memory", "management.endpoints.web.exposure.include=distributedlocks")
				.applyTo(context);
			context.register(App.class);
			TestGenerationContext generation = new TestGenerationContext(App.class);
			new ApplicationContextAotGenerator().processAheadOfTime(context, generation);
			return generation.getRuntimeHints();
		}
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(exclude = DataSourceAutoConfiguration.class)
	static class App {

		@Bean
		Orders orders() {
			return new Orders();
		}

	}

	static class Orders {

		@DistributedLock(key = "'order:' + #id")
		public String ship(long id) {
			return "shipped " + id;
		}

	}

}
