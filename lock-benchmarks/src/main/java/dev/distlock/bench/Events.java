package dev.distlock.bench;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Acquire and release moments of a hot-key run, on the monotonic clock (on Linux
 * {@code System.nanoTime()} is CLOCK_MONOTONIC, shared by the JVMs of one host, so two
 * JVMs' events merge). A hand-off is an acquisition whose previous event is a release by
 * another thread; its latency runs from that release call to the acquire's return.
 */
final class Events {

	/** {@code [nanos, holder, 1 = acquired | 0 = releasing]} per event. */
	private final List<long[]> events = new ArrayList<>();

	synchronized List<long[]> list() {
		return new ArrayList<>(this.events);
	}

	synchronized void addAll(List<long[]> more) {
		this.events.addAll(more);
	}

	void write(Path file) throws IOException {
		try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(file))) {
			out.writeInt(this.events.size());
			for (long[] event : this.events) {
				out.writeLong(event[0]);
				out.writeLong(event[1]);
				out.writeLong(event[2]);
			}
		}
	}

	void read(Path file) throws IOException {
		try (DataInputStream in = new DataInputStream(Files.newInputStream(file))) {
			int count = in.readInt();
			List<long[]> read = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				read.add(new long[] { in.readLong(), in.readLong(), in.readLong() });
			}
			addAll(read);
		}
	}

	/**
	 * What a run shows: acquisitions, hand-offs (and across JVMs), latency percentiles,
	 * and the share of the acquisitions that the JVM with fewer of them made (0 with one
	 * JVM).
	 */
	record Summary(long acquisitions, long handoffs, long crossJvmHandoffs, double p50Millis, double p99Millis,
			double smallerJvmShare) {
	}

	/** Holders {@code >= 1000} belong to the second JVM. */
	Summary summarize() {
		List<long[]> sorted = new ArrayList<>(this.events);
		sorted.sort(Comparator.comparingLong((long[] e) -> e[0]));
		long acquisitions = 0;
		long second = 0;
		long cross = 0;
		List<Long> latencies = new ArrayList<>();
		long[] previous = null;
		for (long[] event : sorted) {
			if (event[2] == 1) {
				acquisitions++;
				second += (event[1] >= 1000) ? 1 : 0;
				if (previous != null && previous[2] == 0 && previous[1] != event[1]) {
					latencies.add(event[0] - previous[0]);
					if ((previous[1] >= 1000) != (event[1] >= 1000)) {
						cross++;
					}
				}
			}
			previous = event;
		}
		long[] values = latencies.stream().mapToLong(Long::longValue).toArray();
		Arrays.sort(values);
		double share = (acquisitions == 0) ? 0 : Math.min(second, acquisitions - second) / (double) acquisitions;
		return new Summary(acquisitions, values.length, cross, percentile(values, 0.5), percentile(values, 0.99),
				share);
	}

	private static double percentile(long[] sorted, double p) {
		if (sorted.length == 0) {
			return Double.NaN;
		}
		return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))] / 1e6;
	}

}
