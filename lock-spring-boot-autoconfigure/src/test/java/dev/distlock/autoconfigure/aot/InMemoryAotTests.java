package dev.distlock.autoconfigure.aot;

import dev.distlock.LeaderElection;
import dev.distlock.LeaderElections;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.test.tools.CompileWithForkedClassLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application on the in-memory store, processed ahead of time and started in AOT mode,
 * locks through annotated methods with a named option set and every annotation attribute,
 * and injects its leader elections by their qualifiers.
 */
@CompileWithForkedClassLoader
@Tag("slow")
class InMemoryAotTests {

	@Test
	void annotatedMethodsLockInAotMode() {
		AheadOfTime.run(App.class,
				AheadOfTime.with(AotServices.STOCK, "distributed-lock.store=in-memory",
						"distributed-lock.leader.elections.reports.enabled=true",
						"distributed-lock.leader.elections.billing.enabled=true"),
				(context) -> {
					AotServices.locksThroughANamedSet(context);
					AotServices.locksTheFamily(context);
					AotServices.locksSeveralKeys(context);
					LeaderElections elections = context.getBean(LeaderElections.class);
					assertThat(context.getBean(Elections.class).reports()).isSameAs(elections.get("reports"));
					assertThat(context.getBean(Elections.class).billing()).isSameAs(elections.get("billing"));
				});
	}

	@Configuration(proxyBeanMethods = false)
	@EnableAutoConfiguration(exclude = DataSourceAutoConfiguration.class)
	@Import({ AotServices.Orders.class, AotServices.Catalog.class, AotServices.Transfers.class })
	static class App {

		/**
		 * Leader elections injected by their qualifiers, from generated bean definitions.
		 */
		@Bean
		Elections elections(@Qualifier("reports") LeaderElection reports,
				@Qualifier("billing") LeaderElection billing) {
			return new Elections(reports, billing);
		}

	}

	record Elections(LeaderElection reports, LeaderElection billing) {
	}

}
