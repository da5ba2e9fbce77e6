package dev.distlock.fuzz;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

import dev.distlock.LockTemplate;
import dev.distlock.redis.TestRedis;
import dev.distlock.support.RenewalScheduler;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The second JVM of {@link CrossJvmFuzzTests}: connects, prints {@code READY}, waits for
 * {@code GO} on standard input, runs the {@link FuzzLoop} and prints its
 * {@link FuzzLoop.Result} line.
 * <p>
 * Arguments: Redis port, thread count, duration in milliseconds.
 */
public final class FuzzWorker {

	private FuzzWorker() {
	}

	public static void main(String[] args) throws Exception {
		int port = Integer.parseInt(args[0]);
		int threads = Integer.parseInt(args[1]);
		Duration duration = Duration.ofMillis(Long.parseLong(args[2]));
		LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(port);
		RenewalScheduler scheduler = new RenewalScheduler();
		int exitCode = 0;
		try {
			LockTemplate template = TestRedis.template(connectionFactory, scheduler);
			StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
			template.run("fuzz-warm-up", () -> redis.hasKey(FuzzLoop.COUNTER));
			System.out.println("READY");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if ("GO".equals(in.readLine())) {
				System.out.println(FuzzLoop.run(List.of(template), redis, threads, duration).line());
			}
			else {
				exitCode = 2;
			}
		}
		finally {
			System.out.flush();
			scheduler.close();
			connectionFactory.destroy();
		}
		System.exit(exitCode);
	}

}
