package dev.distlock.architecture;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.stream.Stream;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMethodCall;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import org.junit.jupiter.api.Test;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The rules every module keeps, checked once over the compiled classes of the whole
 * build: modules depend in one direction, product code takes no monitor, no code (tests
 * included) runs a task on the common pool by default, and a test that starts a server
 * says so.
 */
class RepositoryRulesTests {

	/** The product modules' main classes, taken from the one import of every module. */
	private static final JavaClasses PRODUCT = EveryModule.CLASSES
		.that(DescribedPredicate.describe("main classes of the product modules",
				(javaClass) -> Module.owns(javaClass) && javaClass.getSource()
					.map((source) -> source.getUri().toString().contains("/target/classes/"))
					.orElse(false)));

	@Test
	void modulesDependInOneDirection() {
		assertThat(PRODUCT.stream().map(JavaClass::getPackageName).distinct())
			.as("packages read from the product modules")
			.contains(Module.packageNames());
		Module.RULE.check(PRODUCT);
	}

	@Test
	void productCodeTakesNoMonitor() {
		assertThat(PRODUCT.stream().map(JavaClass::getName)).as("classes read from the product modules")
			.contains("dev.distlock.support.ManagedLease", "dev.distlock.redis.RedisLockProvider",
					"dev.distlock.aop.DistributedLockInterceptor",
					"dev.distlock.autoconfigure.DistributedLockAutoConfiguration");
		Monitors.RULE.check(PRODUCT);
	}

	@Test
	void noTaskRunsOnTheCommonPoolByDefault() {
		CommonPool.RULE.check(everyModulesClasses());
	}

	@Test
	void testsThatStartServersAreTagged() {
		ServerTests.RULE.check(everyModulesClasses());
	}

	private static JavaClasses everyModulesClasses() {
		return EveryModule.CLASSES;
	}

	/**
	 * The main and test classes of every module the reactor has compiled, read once: the
	 * test classes of other modules are on no class path, so they are read where Maven
	 * put them.
	 */
	private static final class EveryModule {

		static final JavaClasses CLASSES = importClasses();

		private static JavaClasses importClasses() {
			List<Path> directories = new ArrayList<>();
			try (Stream<Path> modules = Files.list(repositoryRoot())) {
				for (Path module : modules.filter(Files::isDirectory).toList()) {
					for (String output : List.of("classes", "test-classes")) {
						Path directory = module.resolve("target").resolve(output);
						if (Files.isDirectory(directory)) {
							directories.add(directory);
						}
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			JavaClasses classes = new ClassFileImporter().importPaths(directories);
			assertThat(classes.size()).as("compiled classes, main and test, of the modules built so far")
				.isGreaterThan(500);
			return classes;
		}

	}

	private static Path repositoryRoot() {
		Path directory = Path.of("").toAbsolutePath();
		while (directory != null && !Files.exists(directory.resolve("mvnw"))) {
			directory = directory.getParent();
		}
		assertThat(directory).as("the repository root (the directory with mvnw) above the working directory")
			.isNotNull();
		return directory;
	}

	/**
	 * The product modules and their packages. The core depends on no other module; the
	 * advice, each store and each bridge on the core only; the auto-configuration on any.
	 * Each client library belongs to its store (and the auto-configuration), Spring Boot
	 * to the auto-configuration.
	 */
	private enum Module {

		CORE(List.of("dev.distlock", "dev.distlock.spi..", "dev.distlock.support..", "dev.distlock.inmemory..",
				"dev.distlock.reactive.."), List.of()),

		SPRING(List.of("dev.distlock.aop..", "dev.distlock.config.."), List.of()),

		KOTLIN(List.of("dev.distlock.coroutines.."), List.of()),

		REDIS(List.of("dev.distlock.redis.."),
				List.of("org.springframework.data.redis..", "io.lettuce..", "redis.clients..")),

		JDBC(List.of("dev.distlock.jdbc.."),
				List.of("org.springframework.jdbc..", "org.postgresql..", "org.mariadb..", "com.zaxxer.hikari..")),

		ZOOKEEPER(List.of("dev.distlock.zookeeper.."), List.of("org.apache.curator..", "org.apache.zookeeper..")),

		SHEDLOCK(List.of("dev.distlock.shedlock.."), List.of("net.javacrumbs.shedlock..")),

		INTEGRATION(List.of("dev.distlock.integration.."), List.of("org.springframework.integration..")),

		AUTOCONFIGURE(List.of("dev.distlock.autoconfigure.."), List.of("org.springframework.boot.."));

		static final ArchRule RULE = CompositeArchRule
			.of(Stream.of(values()).filter((module) -> module != AUTOCONFIGURE).map(Module::dependencyRule).toList());

		private final List<String> packages;

		private final List<String> libraries;

		Module(List<String> packages, List<String> libraries) {
			this.packages = packages;
			this.libraries = libraries;
		}

		static String[] packageNames() {
			return Stream.of(values())
				.flatMap((module) -> module.packages.stream())
				.map((name) -> name.replace("..", ""))
				.toArray(String[]::new);
		}

		static boolean owns(JavaClass javaClass) {
			return Stream.of(values())
				.flatMap((module) -> module.packages.stream())
				.anyMatch((pattern) -> JavaClass.Predicates.resideInAPackage(pattern).test(javaClass));
		}

		private ArchRule dependencyRule() {
			List<String> forbidden = new ArrayList<>();
			for (Module other : values()) {
				if (other != this) {
					forbidden.addAll(other.libraries);
					if (other != CORE) {
						forbidden.addAll(other.packages);
					}
				}
			}
			return noClasses().that()
				.resideInAnyPackage(this.packages.toArray(String[]::new))
				.should()
				.dependOnClassesThat()
				.resideInAnyPackage(forbidden.toArray(String[]::new))
				.as("classes in " + this.packages + " depend on no module but the core and on no client library but"
						+ " their own");
		}

	}

	/**
	 * No {@code synchronized} method or block, no {@code Object.wait}, {@code notify} or
	 * {@code notifyAll}: on JDK 21 to 23 a virtual thread that blocks while it holds a
	 * monitor pins its carrier, and a monitor wait cannot time out or be given up;
	 * {@code java.util.concurrent} locks have neither problem. Read from the compiled
	 * classes, so lambdas and nested classes count, and comments do not.
	 */
	private static final class Monitors {

		private static final DescribedPredicate<JavaMethodCall> MONITOR_CALL = DescribedPredicate
			.describe("Object.wait, notify or notifyAll", Monitors::isMonitorCall);

		static final ArchRule RULE = noClasses().should()
			.callMethodWhere(MONITOR_CALL)
			.orShould(declareSynchronizedMethods())
			.orShould(enterMonitors())
			.because("a monitor pins a virtual thread and cannot be waited on with a timeout");

		private static boolean isMonitorCall(JavaMethodCall call) {
			String name = call.getTarget().getName();
			List<String> parameters = call.getTarget().getRawParameterTypes().stream().map(JavaClass::getName).toList();
			if (name.equals("wait")) {
				return parameters.isEmpty() || parameters.equals(List.of("long"))
						|| parameters.equals(List.of("long", "int"));
			}
			return (name.equals("notify") || name.equals("notifyAll")) && parameters.isEmpty();
		}

		private static ArchCondition<JavaClass> declareSynchronizedMethods() {
			return new ArchCondition<>("declare a synchronized method") {
				@Override
				public void check(JavaClass javaClass, ConditionEvents events) {
					javaClass.getMethods()
						.stream()
						.filter((method) -> method.getModifiers().contains(JavaModifier.SYNCHRONIZED))
						.forEach((method) -> events
							.add(SimpleConditionEvent.satisfied(method, method.getFullName() + " is synchronized")));
				}
			};
		}

		/** A {@code synchronized} block leaves no trace but its bytecode. */
		private static ArchCondition<JavaClass> enterMonitors() {
			return new ArchCondition<>("enter a synchronized block") {
				@Override
				public void check(JavaClass javaClass, ConditionEvents events) {
					for (String method : methodsEnteringMonitors(javaClass)) {
						events.add(SimpleConditionEvent.satisfied(javaClass,
								javaClass.getName() + "#" + method + " has a synchronized block"));
					}
				}
			};
		}

		private static List<String> methodsEnteringMonitors(JavaClass javaClass) {
			List<String> methods = new ArrayList<>();
			try (InputStream in = javaClass.getSource().orElseThrow().getUri().toURL().openStream()) {
				new ClassReader(in).accept(new ClassVisitor(Opcodes.ASM9) {
					@Override
					public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
							String[] exceptions) {
						return new MethodVisitor(Opcodes.ASM9) {
							@Override
							public void visitInsn(int opcode) {
								if (opcode == Opcodes.MONITORENTER) {
									methods.add(name);
								}
							}
						};
					}
				}, ClassReader.SKIP_DEBUG);
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
			return methods;
		}

	}

	/**
	 * No {@code CompletableFuture.runAsync} or {@code supplyAsync} without an executor,
	 * in any module, tests included. On a 2-core machine the common pool's parallelism is
	 * 1: JDK 17 then gives every such task a thread of its own, but JDK 25 runs them on
	 * the pool one at a time, so callers that must wait at the same moment never do.
	 * Tests use {@code TestThreads.EACH} or an executor of their own.
	 */
	private static final class CommonPool {

		static final ArchRule RULE = noClasses().should()
			.callMethod(CompletableFuture.class, "runAsync", Runnable.class)
			.orShould()
			.callMethod(CompletableFuture.class, "supplyAsync", Supplier.class)
			.because("the common pool may run one task at a time");

	}

	/**
	 * A test class that starts a server or another JVM, itself or through what it uses,
	 * carries {@code @Tag("server")} (or its superclass does), so that it runs in the
	 * integration-test phase and {@code ./mvnw test} stays fast.
	 */
	private static final class ServerTests {

		private static final Set<String> LAUNCHERS = Set.of("dev.distlock.harness.redis.RedisServer",
				"dev.distlock.harness.redis.RedisCluster", "dev.distlock.harness.redis.RedisSentinel",
				"dev.distlock.harness.jdbc.AbstractDatabaseServer", "dev.distlock.harness.jdbc.ServerProcesses",
				"dev.distlock.harness.ChildJvm", "org.apache.curator.test.TestingServer",
				"org.apache.curator.test.TestingCluster");

		/**
		 * The sample's browser test runs only in its own profile, never in the test
		 * phase.
		 */
		private static final Set<Object> SERVER_TAGS = Set.of("server", "browser");

		private static final DescribedPredicate<JavaClass> TEST_CLASS = DescribedPredicate.describe("test classes",
				(javaClass) -> javaClass.isTopLevelClass() && javaClass.getSimpleName().endsWith("Tests")
						&& javaClass.getSource()
							.map((source) -> source.getUri().toString().contains("/test-classes/"))
							.orElse(false));

		private static final DescribedPredicate<JavaClass> TAGGED = DescribedPredicate.describe("tagged server",
				ServerTests::isTaggedServer);

		private static final DescribedPredicate<JavaClass> LAUNCHER = DescribedPredicate
			.describe("start a server or a JVM", (javaClass) -> LAUNCHERS.contains(javaClass.getName()));

		static final ArchRule RULE = noClasses().that(TEST_CLASS)
			.and(DescribedPredicate.not(TAGGED))
			.should()
			.transitivelyDependOnClassesThat(LAUNCHER)
			.because("./mvnw test runs the tests that start no server");

		private static boolean isTaggedServer(JavaClass javaClass) {
			for (JavaClass type = javaClass; type != null; type = type.getRawSuperclass().orElse(null)) {
				boolean tagged = type.getAnnotations()
					.stream()
					.anyMatch((annotation) -> annotation.getRawType().getName().equals("org.junit.jupiter.api.Tag")
							&& SERVER_TAGS.contains(annotation.get("value").orElse(null)));
				if (tagged) {
					return true;
				}
			}
			return false;
		}

	}

}
