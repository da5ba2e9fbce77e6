package dev.distlock.fuzz;

import dev.distlock.Lease;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.DistributedLockAutoConfiguration;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.support.RenewalScheduler;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The JVM of {@link ShutdownWhileHoldingTests}: a Spring Boot application that takes a
 * lock (60s lease, renewed every 20s), prints {@code HELD <token>}, and holds it until
 * the JVM is told to stop. As the context closes it prints
 * {@code STOPPED pending-renewals=<n> held=<bool>}, seen after distlock's own shutdown
 * step.
 * <p>
 * Arguments: Redis port, lock key.
 */
@Configuration(proxyBeanMethods = false)
@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
		DistributedLockAutoConfiguration.class })
public class ShutdownHolder {

	private static volatile Lease lease;

	public static void main(String[] args) throws Exception {
		ConfigurableApplicationContext context = new SpringApplicationBuilder(ShutdownHolder.class)
			.web(WebApplicationType.NONE)
			.logStartupInfo(false)
			.properties("spring.main.banner-mode=off", "spring.data.redis.host=127.0.0.1",
					"spring.data.redis.port=" + args[0], "distributed-lock.lease-time=60s")
			.run();
		lease = context.getBean(LockTemplate.class).acquire(args[1], LockOptions.defaults());
		System.out.println("HELD " + lease.fencingToken());
		System.out.flush();
		while (System.in.read() != -1) {
			// hold until the JVM is stopped
		}
	}

	@Bean
	SmartLifecycle afterLockRelease(RenewalScheduler scheduler) {
		return new SmartLifecycle() {

			private volatile boolean running;

			@Override
			public void start() {
				this.running = true;
			}

			@Override
			public void stop() {
				this.running = false;
				Lease held = lease;
				System.out.println("STOPPED pending-renewals=" + scheduler.pendingTasks() + " held="
						+ (held != null && held.isHeld()));
				System.out.flush();
			}

			@Override
			public boolean isRunning() {
				return this.running;
			}

			@Override
			public int getPhase() {
				// Stops after distlock's release step, before the Redis connections.
				return SmartLifecycle.DEFAULT_PHASE - 8192;
			}

		};
	}

}
