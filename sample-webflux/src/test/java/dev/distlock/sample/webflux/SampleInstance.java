package dev.distlock.sample.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One instance of the sample in a JVM of its own ({@code ChildJvm}), as a second
 * deployment would run it. Prints {@code READY <port>} once it serves HTTP, so the test
 * knows where to send requests; runs until the test kills it.
 */
public final class SampleInstance {

	/** The line printed once the instance serves HTTP, followed by its port. */
	public static final String READY = "READY ";

	private SampleInstance() {
	}

	public static void main(String[] args) {
		ConfigurableApplicationContext context = SpringApplication.run(WebfluxSampleApplication.class, args);
		System.out.println(READY + context.getEnvironment().getProperty("local.server.port"));
	}

}
