package dev.distlock.sample.webflux;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Runs the reactive sample: a WebFlux service selling the last items of a SKU. It lives
 * in its own base package, so component scanning never picks up the library's classes:
 * distlock arrives only through its auto-configuration, as in a user's application.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class WebfluxSampleApplication {

	public static void main(String[] args) {
		SpringApplication.run(WebfluxSampleApplication.class, args);
	}

}
