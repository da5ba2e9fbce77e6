package dev.distlock.zookeeper;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import dev.distlock.LockBackendException;
import dev.distlock.spi.LatchStore.LatchState;
import org.apache.zookeeper.data.Stat;

/**
 * What a latch's node holds, as text: a first line {@code <generation> <count>
 * <previous generation> <previous opened: 0|1>}, then one line per participant counted
 * (URL-encoded, so any name fits on one line). A generation of 0 is one still to be
 * numbered: the zxid of the write that stored it, which only a reader of that write's
 * version can know; the next write stores the number.
 *
 * @param generation the generation, or 0 for the zxid of the write that armed it
 * @param count participants needed to open it
 * @param previousGeneration the generation before, 0 if none
 * @param previousOpened whether the previous generation opened
 * @param counted the participants counted in this generation, in the order counted
 */
record LatchData(long generation, int count, long previousGeneration, boolean previousOpened, List<String> counted) {

	LatchData {
		counted = List.copyOf(counted);
	}

	/** A new generation, numbered by the write that stores it. */
	static LatchData armed(int count, long previousGeneration, boolean previousOpened) {
		return new LatchData(0, count, previousGeneration, previousOpened, List.of());
	}

	/** The data of a node as read with {@code stat}, its generation numbered. */
	static LatchData parse(String key, byte[] bytes, Stat stat) {
		try {
			String[] lines = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
			String[] head = lines[0].split(" ");
			List<String> counted = new ArrayList<>();
			for (int i = 1; i < lines.length; i++) {
				if (!lines[i].isEmpty()) {
					counted.add(URLDecoder.decode(lines[i], StandardCharsets.UTF_8));
				}
			}
			return new LatchData(Long.parseLong(head[0]), Integer.parseInt(head[1]), Long.parseLong(head[2]),
					"1".equals(head[3]), counted)
				.resolved(stat);
		}
		catch (RuntimeException ex) {
			throw new LockBackendException(key, "The node of latch '" + key + "' holds no latch", ex);
		}
	}

	/** This data as stored by the write that produced {@code stat}: numbered. */
	LatchData resolved(Stat stat) {
		return (this.generation != 0) ? this : new LatchData(stat.getMzxid(), this.count, this.previousGeneration,
				this.previousOpened, this.counted);
	}

	/** This generation with {@code participant} counted too. */
	LatchData counting(String participant) {
		List<String> more = new ArrayList<>(this.counted);
		more.add(participant);
		return new LatchData(this.generation, this.count, this.previousGeneration, this.previousOpened, more);
	}

	/** Participants still missing; 0 once open. */
	int remaining() {
		return Math.max(0, this.count - this.counted.size());
	}

	LatchState state() {
		return new LatchState(this.generation, this.count, remaining(), this.previousGeneration, this.previousOpened);
	}

	byte[] bytes() {
		StringBuilder text = new StringBuilder().append(this.generation)
			.append(' ')
			.append(this.count)
			.append(' ')
			.append(this.previousGeneration)
			.append(' ')
			.append(this.previousOpened ? '1' : '0');
		for (String participant : this.counted) {
			text.append('\n').append(URLEncoder.encode(participant, StandardCharsets.UTF_8));
		}
		return text.toString().getBytes(StandardCharsets.UTF_8);
	}

}
