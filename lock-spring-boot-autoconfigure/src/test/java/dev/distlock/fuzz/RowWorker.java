package dev.distlock.fuzz;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.springframework.context.ConfigurableApplicationContext;

/**
 * The second JVM of {@link TransactionalRowTests}: starts {@link RowApp}, prints
 * {@code READY}, waits for {@code GO}, places orders, prints
 * {@code RESULT <successes> <failures>}.
 * <p>
 * Arguments: Redis port, JDBC URL, release-after-commit, threads, duration in ms.
 */
public final class RowWorker {

	private RowWorker() {
	}

	public static void main(String[] args) throws Exception {
		int exitCode = 0;
		try (ConfigurableApplicationContext context = RowApp.start(Integer.parseInt(args[0]), args[1],
				Boolean.parseBoolean(args[2]))) {
			RowApp.Orders orders = context.getBean(RowApp.Orders.class);
			System.out.println("READY");
			BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
			if ("GO".equals(in.readLine())) {
				long[] result = RowApp.load(orders, Integer.parseInt(args[3]),
						Duration.ofMillis(Long.parseLong(args[4])));
				System.out.println("RESULT " + result[0] + " " + result[1]);
			}
			else {
				exitCode = 2;
			}
		}
		System.out.flush();
		System.exit(exitCode);
	}

}
