package dev.distlock;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.SpringAsmInfo;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No code of this repository, tests included, starts a task with
 * {@code CompletableFuture.runAsync} or {@code supplyAsync} without an executor. On a
 * 2-core machine the common pool's parallelism is 1: JDK 17 then gives every such task a
 * thread of its own, but JDK 25 runs them on the pool one at a time, so callers that must
 * wait at the same moment never do (four readers that must hold a read lock together hung
 * the JDK 25 build). Tests use {@code TestThreads.EACH} or an executor of their own.
 *
 * <p>
 * Reads the compiled classes of every module built before this one in the reactor (this
 * module's dependencies and their tests), so a plain {@code ./mvnw verify} checks all the
 * modules with tests but the sample application, whose tests start no such task.
 */
class CommonPoolGuardTests {

	private static final String COMPLETABLE_FUTURE = "java/util/concurrent/CompletableFuture";

	@Test
	void noTaskRunsOnTheCommonPoolByDefault() throws IOException {
		Path root = repositoryRoot();
		List<String> offenders = new ArrayList<>();
		int classes = 0;
		try (Stream<Path> modules = Files.list(root)) {
			for (Path module : modules.filter(Files::isDirectory).toList()) {
				for (String output : List.of("classes", "test-classes")) {
					Path dir = module.resolve("target").resolve(output);
					if (!Files.isDirectory(dir)) {
						continue;
					}
					try (Stream<Path> files = Files.walk(dir)) {
						for (Path file : files.filter((f) -> f.toString().endsWith(".class")).toList()) {
							classes++;
							offenders.addAll(defaultPoolCalls(root.relativize(file).toString(), file));
						}
					}
				}
			}
		}
		assertThat(classes).as("compiled classes found under " + root).isGreaterThan(100);
		assertThat(offenders).as("calls that run a task on the common pool").isEmpty();
	}

	private static List<String> defaultPoolCalls(String name, Path file) {
		List<String> found = new ArrayList<>();
		try (InputStream in = Files.newInputStream(file)) {
			new ClassReader(in).accept(new ClassVisitor(SpringAsmInfo.ASM_VERSION) {

				@Override
				public MethodVisitor visitMethod(int access, String method, String descriptor, String signature,
						String[] exceptions) {
					return new MethodVisitor(SpringAsmInfo.ASM_VERSION) {

						@Override
						public void visitMethodInsn(int opcode, String owner, String called, String calledDescriptor,
								boolean isInterface) {
							boolean defaultPool = calledDescriptor
								.equals("(Ljava/lang/Runnable;)" + "L" + COMPLETABLE_FUTURE + ";")
									|| calledDescriptor
										.equals("(Ljava/util/function/Supplier;)" + "L" + COMPLETABLE_FUTURE + ";");
							if (owner.equals(COMPLETABLE_FUTURE) && defaultPool) {
								found.add(
										name + " " + method + ": CompletableFuture." + called + " without an executor");
							}
						}

					};
				}

			}, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return found;
	}

	private static Path repositoryRoot() {
		Path dir = Path.of("").toAbsolutePath();
		while (dir != null && !Files.exists(dir.resolve("mvnw"))) {
			dir = dir.getParent();
		}
		assertThat(dir).as("the repository root (the directory with mvnw) above the working directory").isNotNull();
		return dir;
	}

}
