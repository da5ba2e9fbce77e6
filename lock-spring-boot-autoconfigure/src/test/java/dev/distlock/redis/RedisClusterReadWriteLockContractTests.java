package dev.distlock.redis;

import dev.distlock.spi.SharedLocking;
import dev.distlock.testsupport.AbstractReadWriteLockContractTests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The read-write lock contract on a Redis Cluster of three masters: a key's lock, its
 * slot's fencing counter and its writers' intents share a slot, so each script (the
 * mutex's block-reserving acquire recording a writer's intent among them) runs on one
 * master, and waiters are woken through the cluster's pub/sub.
 */
class RedisClusterReadWriteLockContractTests extends AbstractReadWriteLockContractTests {

	private static RedisClusterPair pair;

	@BeforeAll
	static void startCluster() {
		pair = new RedisClusterPair();
	}

	@AfterAll
	static void stopCluster() {
		pair.close();
	}

	@Override
	protected SharedLocking provider() {
		return pair.provider;
	}

	@Override
	protected SharedLocking otherProvider() {
		return pair.otherProvider;
	}

}
