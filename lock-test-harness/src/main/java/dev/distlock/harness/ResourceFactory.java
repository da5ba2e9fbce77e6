package dev.distlock.harness;

import java.util.Map;

import dev.distlock.harness.fault.FencedResource;
import dev.distlock.harness.fuzz.FencedRegister;
import dev.distlock.harness.fuzz.SharedCounter;

/**
 * Builds the shared resources the harness's workloads protect with a lock, from plain
 * settings, in the test JVM or a child JVM: the resources must live outside the lock
 * store (a fault of the store must not touch them) and be reachable from every JVM of a
 * run. {@code lock-test-harness-redis} has one on a redis-server of its own
 * ({@code RedisResources}), which any store's tests may use. Implementations need a
 * public no-argument constructor; what each call returns is the caller's to close.
 */
public interface ResourceFactory {

	/** The per-key fenced resource of the fault workload. */
	FencedResource fencedResource(Map<String, String> settings);

	/** The fenced register the paused holder writes to. */
	FencedRegister fencedRegister(Map<String, String> settings);

	/** The counter of the read-pause-write fuzz loop. */
	SharedCounter sharedCounter(Map<String, String> settings);

}
