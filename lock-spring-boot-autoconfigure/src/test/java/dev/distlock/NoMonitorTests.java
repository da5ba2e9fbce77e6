package dev.distlock;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import dev.distlock.aop.DistributedLockAdvisor;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.redis.RedisLockProvider;
import dev.distlock.support.DefaultLockTemplate;
import org.junit.jupiter.api.Test;

import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No class of this module takes a monitor: no {@code synchronized} block or method, no
 * {@code Object.wait}, {@code notify} or {@code notifyAll}. On JDK 21 to 23 a virtual
 * thread that blocks while it holds a monitor pins its carrier, and a monitor wait cannot
 * time out or be given up; {@code java.util.concurrent} locks have neither problem. Read
 * from the compiled classes, so lambdas and nested classes count, and comments do not.
 */
class NoMonitorTests {

	/**
	 * Top-level classes (with their nested classes) that still use monitors, each to be
	 * converted and removed from here: this list only ever shrinks.
	 */
	private static final Set<String> NOT_YET_CONVERTED = Set.of();

	@Test
	void mainClassesUseNoMonitors() throws IOException, URISyntaxException {
		List<String> scanned = new ArrayList<>();
		List<String> uses = new ArrayList<>();
		// Every main module: a class directory, or a jar once the reactor has packaged
		// it.
		for (Class<?> module : List.of(DefaultLockTemplate.class, DistributedLockAdvisor.class, RedisLockProvider.class,
				DistributedLockAutoConfiguration.class)) {
			Path location = Path.of(module.getProtectionDomain().getCodeSource().getLocation().toURI());
			try (FileSystem jar = Files.isDirectory(location) ? null : FileSystems.newFileSystem(location)) {
				Path root = (jar != null) ? jar.getPath("/") : location;
				try (Stream<Path> files = Files.walk(root)) {
					for (Path file : (Iterable<Path>) files
						.filter((path) -> path.toString().endsWith(".class"))::iterator) {
						try (InputStream in = Files.newInputStream(file)) {
							ClassReader reader = new ClassReader(in);
							String className = reader.getClassName().replace('/', '.');
							scanned.add(className);
							if (!NOT_YET_CONVERTED.contains(topLevel(className))) {
								reader.accept(new MonitorFinder(className, uses), ClassReader.SKIP_DEBUG);
							}
						}
					}
				}
			}
		}
		assertThat(scanned).as("classes read from the main modules")
			.contains("dev.distlock.redis.RedisReleaseSignals", "dev.distlock.redis.ShardedSubscriptions",
					"dev.distlock.support.DefaultLockTemplate", "dev.distlock.support.ManagedLease",
					"dev.distlock.aop.DistributedLockInterceptor",
					"dev.distlock.autoconfigure.DistributedLockAutoConfiguration");
		assertThat(uses).as("monitors in main code (use java.util.concurrent locks instead)").isEmpty();
	}

	private static String topLevel(String className) {
		int nested = className.indexOf('$');
		return (nested < 0) ? className : className.substring(0, nested);
	}

	private static final class MonitorFinder extends ClassVisitor {

		private final String className;

		private final List<String> uses;

		MonitorFinder(String className, List<String> uses) {
			super(Opcodes.ASM9);
			this.className = className;
			this.uses = uses;
		}

		@Override
		public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
				String[] exceptions) {
			String method = this.className + "#" + name;
			if ((access & Opcodes.ACC_SYNCHRONIZED) != 0) {
				this.uses.add(method + ": synchronized method");
			}
			return new MethodVisitor(Opcodes.ASM9) {

				@Override
				public void visitInsn(int opcode) {
					if (opcode == Opcodes.MONITORENTER) {
						MonitorFinder.this.uses.add(method + ": synchronized block");
					}
				}

				@Override
				public void visitMethodInsn(int opcode, String owner, String called, String calledDescriptor,
						boolean isInterface) {
					// Final methods of Object: no other method can have these signatures.
					boolean waits = called.equals("wait") && (calledDescriptor.equals("()V")
							|| calledDescriptor.equals("(J)V") || calledDescriptor.equals("(JI)V"));
					boolean notifies = (called.equals("notify") || called.equals("notifyAll"))
							&& calledDescriptor.equals("()V");
					if (waits || notifies) {
						MonitorFinder.this.uses.add(method + ": calls " + owner.replace('/', '.') + "." + called);
					}
				}

			};
		}

	}

}
