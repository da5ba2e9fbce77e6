package dev.distlock.zookeeper;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which of a key's places an attempt takes: a reader makes a node of its own rather than
 * look again from another reader's node that still waits behind a writer.
 */
class WaitingPlacesTests {

	private static final String PARENT = "/distributed-lock/key";

	private final WaitingPlaces places = new WaitingPlaces("key");

	WaitingPlacesTests() {
		this.places.add(() -> {
		});
		this.places.add(() -> {
		});
	}

	@Test
	void aReaderTakesAnEmptyPlaceRatherThanAReadersNodeStillBehindAWriter() {
		QueuedNode waiting = queued(true, PARENT + "/_c_a-lock-0000000001");
		QueuedNode claimed = this.places.claim(true);
		assertThat(claimed).isNotNull().isNotSameAs(waiting);
		assertThat(claimed.path).isNull();
	}

	@Test
	void aReaderTakesAReadersNodeWhoseWriterHasGone() {
		QueuedNode woken = queued(true, null);
		assertThat(this.places.claim(true)).isSameAs(woken);
	}

	@Test
	void aWriterTakesTheWritersNodeFurthestAheadEvenWhileItWaits() {
		QueuedNode waiting = queued(false, PARENT + "/_c_a-read-0000000001");
		assertThat(this.places.claim(false)).isSameAs(waiting);
	}

	/** Gives the first free place a node, as an attempt that found the key busy does. */
	private QueuedNode queued(boolean read, String watched) {
		QueuedNode place = this.places.claim(read);
		assertThat(place).isNotNull();
		place.path = PARENT + "/_c_b-" + (read ? "read" : "lock") + "-0000000002";
		place.read = read;
		place.watched = watched;
		place.lock.unlock();
		return place;
	}

}
