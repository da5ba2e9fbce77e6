package dev.distlock.redis;

/**
 * A value written through {@link RedisFencedValues}, with the highest fencing token its
 * key has accepted.
 *
 * @param value the value
 * @param token the highest fencing token accepted for the key; 0 when the value was
 * written without a fence (directly to the hash's {@code value} field)
 */
public record FencedValue(String value, long token) {

}
