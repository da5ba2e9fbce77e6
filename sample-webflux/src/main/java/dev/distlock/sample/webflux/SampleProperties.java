package dev.distlock.sample.webflux;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The sample's own settings ({@code sample.*}), kept apart from
 * {@code distributed-lock.*} so it is clear which options belong to the library.
 *
 * @param workPause The simulated work between reading the stock and writing it back,
 * waited for without blocking a thread; long enough that unlocked concurrent purchases
 * reliably interleave and oversell.
 * @param locking Whether a purchase takes the SKU's distributed lock unless the request
 * says otherwise ({@code ?locking=false}).
 * @param store Where the stock lives: redis (shared by every instance) or in-memory (this
 * instance only). Defaults to in-memory when no spring.data.redis.* connection is
 * configured, to redis otherwise.
 */
@ConfigurationProperties("sample")
public record SampleProperties(@DefaultValue("10ms") Duration workPause, @DefaultValue("true") boolean locking,
		@DefaultValue("redis") String store) {

}
