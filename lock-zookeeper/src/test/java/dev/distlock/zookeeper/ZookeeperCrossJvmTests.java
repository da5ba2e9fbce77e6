package dev.distlock.zookeeper;

import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.fuzz.AbstractCrossJvmFuzzTests;
import dev.distlock.harness.fuzz.AbstractHolderKilledTests;
import dev.distlock.harness.fuzz.AbstractHolderPausedTests;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Tag;

/**
 * The cross-JVM tests on a ZooKeeper test server: threads plus a second JVM doing
 * read-pause-write on a shared counter; a holder JVM killed with {@code kill -9}, whose
 * ephemeral node outlives it until its session (the lease, 2 s) expires; a holder JVM
 * stopped with {@code SIGSTOP} past its session, whose stale fenced writes are rejected.
 * The holders' sessions time out after their lease ({@link ZookeeperProviderFactory}).
 * The base class's renewal check fits sessions: one and a half leases after the grant the
 * lock is still held only because the session's heartbeats kept it alive.
 */
@Tag("server")
class ZookeeperCrossJvmTests {

	static StoreFixture store() {
		return new ZookeeperStoreFixture();
	}

	@Nested
	class Fuzz extends AbstractCrossJvmFuzzTests {

		@Override
		protected StoreFixture startStore() {
			return store();
		}

	}

	@Nested
	class HolderKilled extends AbstractHolderKilledTests {

		@Override
		protected StoreFixture startStore() {
			return store();
		}

	}

	@Nested
	class HolderPaused extends AbstractHolderPausedTests {

		@Override
		protected StoreFixture startStore() {
			return store();
		}

	}

}
