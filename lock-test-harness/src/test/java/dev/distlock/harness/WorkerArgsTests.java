package dev.distlock.harness;

import java.util.LinkedHashMap;
import java.util.Map;

import dev.distlock.inmemory.InMemoryLockProvider;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * A child JVM's command line: settings survive the trip, and a bad one is named.
 */
class WorkerArgsTests {

	@Test
	void settingsSurviveTheCommandLine() {
		Map<String, String> settings = new LinkedHashMap<>();
		settings.put("store.port", "6379");
		settings.put("url", "jdbc:postgresql://127.0.0.1:5432/db?a=b");
		settings.put("empty", "");
		assertThat(WorkerArgs.parse(WorkerArgs.of(settings))).isEqualTo(settings);
	}

	@Test
	void aMalformedArgumentIsNamed() {
		assertThatIllegalArgumentException().isThrownBy(() -> WorkerArgs.parse(new String[] { "port" }))
			.withMessageContaining("key=value")
			.withMessageContaining("'port'");
		assertThatIllegalArgumentException().isThrownBy(() -> WorkerArgs.of(Map.of("a=b", "c")))
			.withMessageContaining("a=b");
	}

	@Test
	void aMissingOrNonNumericSettingIsNamed() {
		assertThatIllegalArgumentException().isThrownBy(() -> WorkerArgs.require(Map.of(), "store.port"))
			.withMessageContaining("store.port");
		assertThatIllegalArgumentException().isThrownBy(() -> WorkerArgs.number(Map.of("port", "x1"), "port"))
			.withMessageContaining("'port'")
			.withMessageContaining("x1");
	}

	@Test
	void aFactoryIsInstantiatedByNameAndABadOneIsNamed() {
		ProviderFactory factory = WorkerArgs.instance(Map.of("provider", InMemory.class.getName()), "provider",
				ProviderFactory.class);
		assertThat(factory.create(Map.of())).isInstanceOf(InMemoryLockProvider.class);
		assertThatIllegalArgumentException()
			.isThrownBy(
					() -> WorkerArgs.instance(Map.of("provider", "no.such.Factory"), "provider", ProviderFactory.class))
			.withMessageContaining("no.such.Factory");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> WorkerArgs.instance(Map.of("provider", String.class.getName()), "provider",
					ProviderFactory.class))
			.withMessageContaining("does not implement " + ProviderFactory.class.getName());
		assertThatIllegalArgumentException()
			.isThrownBy(() -> WorkerArgs.instance(Map.of("provider", NoDefaultConstructor.class.getName()), "provider",
					ProviderFactory.class))
			.withMessageContaining("public no-argument constructor");
	}

	/** A factory of the in-memory store, for the test above. */
	public static final class InMemory implements ProviderFactory {

		@Override
		public LockProvider create(Map<String, String> settings) {
			return new InMemoryLockProvider();
		}

		@Override
		public void close() {
		}

	}

	/** Not instantiable by name. */
	public static final class NoDefaultConstructor implements ProviderFactory {

		public NoDefaultConstructor(String unused) {
		}

		@Override
		public LockProvider create(Map<String, String> settings) {
			throw new UnsupportedOperationException();
		}

		@Override
		public void close() {
		}

	}

}
