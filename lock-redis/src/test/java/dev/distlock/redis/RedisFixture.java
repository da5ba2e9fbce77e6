package dev.distlock.redis;

import dev.distlock.harness.ProviderFactory;
import dev.distlock.harness.ResourceFactory;
import dev.distlock.harness.StoreFixture;
import dev.distlock.harness.redis.RedisResources;

/**
 * A Redis store for the harness of {@code lock-test-harness}: locks through
 * {@link RedisProviderFactory}, resources through {@link RedisResources}.
 */
public interface RedisFixture extends StoreFixture {

	@Override
	default Class<? extends ProviderFactory> providerFactory() {
		return RedisProviderFactory.class;
	}

	@Override
	default Class<? extends ResourceFactory> resourceFactory() {
		return RedisResources.class;
	}

}
