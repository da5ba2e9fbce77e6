package dev.distlock.redis;

import dev.distlock.testsupport.ProviderFactory;
import dev.distlock.testsupport.RedisResources;
import dev.distlock.testsupport.ResourceFactory;
import dev.distlock.testsupport.StoreFixture;

/**
 * A Redis store for the harness of {@code lock-test-support}: locks through
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
