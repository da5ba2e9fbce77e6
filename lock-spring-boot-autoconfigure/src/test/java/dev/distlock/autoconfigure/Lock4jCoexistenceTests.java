package dev.distlock.autoconfigure;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.baomidou.lock.LockInfo;
import com.baomidou.lock.spring.boot.autoconfigure.LockAutoConfiguration;
import com.baomidou.lock.spring.boot.autoconfigure.RedisTemplateLockAutoConfiguration;
import dev.distlock.DistributedLock;
import dev.distlock.Lease;
import dev.distlock.LockContext;
import dev.distlock.LockOptions;
import dev.distlock.LockTemplate;
import dev.distlock.autoconfigure.redis.DistributedLockRedisAutoConfiguration;
import dev.distlock.harness.redis.RedisServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * distlock beside lock4j, a library an application may already have: lock4j's template is
 * a bean called {@code lockTemplate}, so distlock must name none of its beans that way
 * (Boot refuses to override a bean definition). Both libraries' auto-configurations are
 * the ones listed in their {@code AutoConfiguration.imports}.
 */
@Tag("server")
class Lock4jCoexistenceTests {

	private static final LockOptions NO_WAIT = LockOptions.builder().waitTime(Duration.ZERO).build();

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, LockAutoConfiguration.class,
				RedisTemplateLockAutoConfiguration.class, DistributedLockRedisAutoConfiguration.class,
				DistributedLockAutoConfiguration.class))
		.withPropertyValues("spring.data.redis.host=127.0.0.1",
				"spring.data.redis.port=" + RedisServer.shared().port());

	private final ExecutorService otherThread = Executors.newSingleThreadExecutor();

	@AfterEach
	void stopOtherThread() {
		this.otherThread.shutdownNow();
	}

	@Test
	void bothLibrariesStartInOneContextAndLock() {
		this.runner.withUserConfiguration(JobsConfiguration.class).run((context) -> {
			assertThat(context).hasNotFailed()
				.hasSingleBean(com.baomidou.lock.LockTemplate.class)
				.hasSingleBean(LockTemplate.class);
			assertThat(context.getBean("lockTemplate")).isInstanceOf(com.baomidou.lock.LockTemplate.class);

			LockTemplate distlock = context.getBean(LockTemplate.class);
			try (Lease lease = distlock.acquire("lock4j-neighbour", NO_WAIT)) {
				assertThat(lease.isHeld()).isTrue();
				assertThat(onOtherThread(() -> distlock.tryAcquire("lock4j-neighbour", NO_WAIT))).isEmpty();
			}
			Optional<Lease> inside = context.getBean(Jobs.class).run("1");
			assertThat(inside).hasValueSatisfying((lease) -> assertThat(lease.key()).isEqualTo("lock4j-job:1"));

			com.baomidou.lock.LockTemplate lock4j = context.getBean(com.baomidou.lock.LockTemplate.class);
			LockInfo info = lock4j.lock("lock4j-neighbour-own", 30_000, 1_000);
			assertThat(info).as("lock4j's own lock").isNotNull();
			assertThat(lock4j.releaseLock(info)).isTrue();
		});
	}

	private <T> T onOtherThread(Supplier<T> action) throws Exception {
		return this.otherThread.submit(action::get).get(30, TimeUnit.SECONDS);
	}

	@Configuration(proxyBeanMethods = false)
	static class JobsConfiguration {

		@Bean
		Jobs jobs() {
			return new Jobs();
		}

	}

	static class Jobs {

		@DistributedLock(key = "'lock4j-job:' + #id")
		public Optional<Lease> run(String id) {
			return LockContext.current();
		}

	}

}
