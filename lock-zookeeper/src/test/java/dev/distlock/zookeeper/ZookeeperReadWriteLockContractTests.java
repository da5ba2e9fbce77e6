package dev.distlock.zookeeper;

import java.io.IOException;

import dev.distlock.contract.AbstractReadWriteLockContractTests;
import dev.distlock.spi.LockProvider;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;

/**
 * The published read-write lock contract on a real ZooKeeper server, with two clients
 * standing for two JVMs.
 */
@Tag("server")
class ZookeeperReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static ZookeeperPair pair;

	@BeforeAll
	static void start() {
		pair = new ZookeeperPair();
	}

	@AfterAll
	static void stop() throws IOException {
		pair.close();
	}

	@Override
	protected LockProvider provider() {
		return pair.provider;
	}

	@Override
	protected LockProvider otherProvider() {
		return pair.other;
	}

}
