package dev.distlock.harness.redis;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import dev.distlock.harness.FaultProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.fail;

/**
 * {@link FaultProxy} in front of a real {@code redis-server}, driven with raw RESP over
 * plain sockets so that nothing but the proxy stands between the test and Redis. What
 * really reached Redis is checked with {@link RedisServer#command}, which bypasses the
 * proxy.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
@Tag("server")
class FaultProxyTests {

	/**
	 * How long a test waits for a reply that must not come; replies on loopback take well
	 * under a millisecond.
	 */
	private static final Duration SILENCE = Duration.ofMillis(300);

	private static RedisServer server;

	private FaultProxy proxy;

	@BeforeAll
	static void startRedis() {
		server = RedisServer.start();
	}

	@AfterAll
	static void stopRedis() {
		server.close();
	}

	@BeforeEach
	void startProxy() {
		server.command("FLUSHALL");
		this.proxy = FaultProxy.start(server.host(), server.port());
	}

	@AfterEach
	void closeProxy() {
		this.proxy.close();
	}

	@Test
	void forwardsBothWaysOnALoopbackPortOfItsOwn() throws IOException {
		assertThat(this.proxy.host()).isEqualTo("127.0.0.1");
		assertThat(this.proxy.port()).isNotEqualTo(server.port());
		try (RawClient client = connect()) {
			assertThat(client.call("PING")).isEqualTo("+PONG");
			assertThat(client.call("SET", "k", "v")).isEqualTo("+OK");
			assertThat(client.call("GET", "k")).isEqualTo("v");
		}
		assertThat(server.command("GET", "k")).isEqualTo("v");
	}

	@Test
	void delayRepliesHoldsRepliesButLetsRequestsThroughAtOnce() throws IOException {
		Duration delay = Duration.ofMillis(400);
		try (RawClient client = connect()) {
			client.call("PING");
			this.proxy.delayReplies(delay);
			long sent = System.nanoTime();
			client.send("SET", "k", "v");
			await("the SET reached Redis", Duration.ofMillis(200), () -> "v".equals(server.command("GET", "k")));
			assertThat(client.reply()).isEqualTo("+OK");
			assertThat(elapsed(sent)).as("reply delay").isGreaterThanOrEqualTo(delay);
			this.proxy.heal();
			sent = System.nanoTime();
			assertThat(client.call("PING")).isEqualTo("+PONG");
			assertThat(elapsed(sent)).as("after heal").isLessThan(Duration.ofMillis(200));
		}
	}

	/**
	 * Replies that follow each other are each delayed from their own arrival: the delay
	 * does not pile up.
	 */
	@Test
	void delayedRepliesAreNotDelayedCumulatively() throws IOException {
		Duration delay = Duration.ofMillis(300);
		try (RawClient client = connect()) {
			this.proxy.delayReplies(delay);
			long start = System.nanoTime();
			for (int i = 0; i < 4; i++) {
				client.send("ECHO", "m" + i);
				LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
			}
			for (int i = 0; i < 4; i++) {
				assertThat(client.reply()).isEqualTo("m" + i);
			}
			assertThat(elapsed(start)).as("four replies, 50ms apart, each delayed 300ms")
				.isBetween(delay.plusMillis(150), delay.multipliedBy(2));
		}
	}

	@Test
	void blackholeHoldsBothDirectionsWithTheConnectionOpenUntilHeal() throws IOException {
		try (RawClient client = connect()) {
			client.call("PING");
			this.proxy.blackhole();
			client.send("SET", "k", "v");
			client.assertNoReplyWithin(SILENCE);
			assertThat(server.command("GET", "k")).as("request held, not applied").isEqualTo("$-1");
			assertThat(this.proxy.openConnections()).isEqualTo(1);
			try (RawClient late = connect()) {
				late.send("PING");
				late.assertNoReplyWithin(SILENCE);
				this.proxy.heal();
				assertThat(late.reply()).isEqualTo("+PONG");
			}
			assertThat(client.reply()).as("held reply delivered on heal").isEqualTo("+OK");
			assertThat(server.command("GET", "k")).isEqualTo("v");
			assertThat(client.call("GET", "k")).isEqualTo("v");
		}
	}

	@Test
	void holdNewConnectionsHoldsOnlyConnectionsOpenedAfterItUntilHeal() throws IOException {
		try (RawClient open = connect()) {
			open.call("PING");
			this.proxy.holdNewConnections();
			try (RawClient late = connect()) {
				late.send("SET", "held", "v");
				late.assertNoReplyWithin(SILENCE);
				assertThat(open.call("GET", "held")).as("the open connection passes; the new one's request is held")
					.isEqualTo("$-1");
				this.proxy.heal();
				assertThat(late.reply()).as("held request applied and answered on heal").isEqualTo("+OK");
				assertThat(late.call("GET", "held")).isEqualTo("v");
			}
		}
	}

	@Test
	void dropNextReplyAppliesTheRequestButLosesItsReplyAndOnlyThatOne() throws IOException {
		try (RawClient client = connect()) {
			client.call("PING");
			this.proxy.dropNextReply();
			client.send("SET", "k", "v");
			client.assertNoReplyWithin(SILENCE);
			assertThat(server.command("GET", "k")).as("the write was applied").isEqualTo("v");
			assertThat(this.proxy.droppedReplies()).isEqualTo(1);
			assertThat(client.call("INCR", "n")).as("the next reply is the next command's").isEqualTo(":1");
			assertThat(client.call("INCR", "n")).isEqualTo(":2");
			assertThat(this.proxy.droppedReplies()).isEqualTo(1);
		}
	}

	/**
	 * Exactly one RESP reply goes, whether it shares a read with the next one or spans
	 * many reads.
	 */
	@Test
	void dropNextReplyDropsExactlyOneReplyWhateverTheReads() throws IOException {
		String big = "x".repeat(300_000);
		try (RawClient client = connect()) {
			assertThat(client.call("SET", "big", big)).isEqualTo("+OK");
			client.sendPipelined(new String[] { "INCR", "n" }, new String[] { "ECHO", "second" });
			// warm-up: both replies arrive, usually in one read
			assertThat(client.reply()).isEqualTo(":1");
			assertThat(client.reply()).isEqualTo("second");
			this.proxy.dropNextReply();
			client.sendPipelined(new String[] { "INCR", "n" }, new String[] { "ECHO", "second" });
			assertThat(client.reply()).as("the pipelined command after the dropped one").isEqualTo("second");
			assertThat(server.command("GET", "n")).isEqualTo("2");
			this.proxy.dropNextReply();
			client.send("GET", "big");
			assertThat(client.call("PING")).as("nothing of the 300 kB reply is left over").isEqualTo("+PONG");
			assertThat(this.proxy.droppedReplies()).isEqualTo(2);
		}
	}

	/**
	 * What the arming rule is for: a reply to an earlier request that is still on its way
	 * (here: held by a delay) when the drop is armed must not be taken for the reply to
	 * the request that claims it.
	 */
	@Test
	void dropNextReplyNeverTakesAReplyAlreadyOnItsWay() throws IOException {
		try (RawClient client = connect()) {
			this.proxy.delayReplies(Duration.ofMillis(300));
			client.send("INCR", "earlier");
			await("Redis answered the earlier request", Duration.ofSeconds(2),
					() -> "1".equals(server.command("GET", "earlier")));
			this.proxy.dropNextReply();
			client.send("INCR", "claimed");
			await("Redis answered the claiming request", Duration.ofSeconds(2),
					() -> "1".equals(server.command("GET", "claimed")));
			this.proxy.heal();
			client.send("ECHO", "after");
			assertThat(client.reply()).as("the reply that was on its way").isEqualTo(":1");
			assertThat(client.reply()).as("the claimed reply is gone").isEqualTo("after");
			assertThat(this.proxy.droppedReplies()).isEqualTo(1);
		}
	}

	@Test
	void healDisarmsALostReplyThatNoRequestClaimed() throws IOException {
		try (RawClient client = connect()) {
			this.proxy.dropNextReply();
			this.proxy.heal();
			assertThat(client.call("PING")).isEqualTo("+PONG");
			assertThat(this.proxy.droppedReplies()).isZero();
		}
	}

	@Test
	void disconnectAllCutsEveryConnectionAndAcceptsNewOnes() throws IOException {
		try (RawClient first = connect(); RawClient second = connect()) {
			first.call("PING");
			second.call("PING");
			assertThat(this.proxy.openConnections()).isEqualTo(2);
			this.proxy.disconnectAll();
			first.assertCut();
			second.assertCut();
			assertThat(this.proxy.openConnections()).isZero();
		}
		try (RawClient again = connect()) {
			assertThat(again.call("PING")).isEqualTo("+PONG");
		}
	}

	@Test
	void closeStopsAcceptingAndCutsConnections() throws IOException {
		RawClient client = connect();
		client.call("PING");
		this.proxy.close();
		client.assertCut();
		client.close();
		assertThatExceptionOfType(ConnectException.class).isThrownBy(this::connect);
	}

	private RawClient connect() throws IOException {
		Socket socket = new Socket();
		socket.connect(new InetSocketAddress(this.proxy.host(), this.proxy.port()), 1000);
		return new RawClient(socket);
	}

	private static Duration elapsed(long startNanos) {
		return Duration.ofNanos(System.nanoTime() - startNanos);
	}

	private static void await(String what, Duration timeout, BooleanSupplier condition) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() - deadline > 0) {
				fail("timed out after " + timeout + " waiting for: " + what);
			}
			LockSupport.parkNanos(1_000_000);
		}
	}

	/**
	 * RESP over a plain socket: a request is an array of bulk strings; a reply is
	 * returned as its first line ({@code +OK}, {@code :1}, {@code $-1}) or, for a bulk
	 * string, its content.
	 */
	private static final class RawClient implements AutoCloseable {

		private static final int READ_TIMEOUT_MILLIS = 5000;

		private final Socket socket;

		private final InputStream in;

		private final OutputStream out;

		RawClient(Socket socket) throws IOException {
			this.socket = socket;
			this.socket.setSoTimeout(READ_TIMEOUT_MILLIS);
			this.in = new BufferedInputStream(socket.getInputStream());
			this.out = socket.getOutputStream();
		}

		String call(String... args) throws IOException {
			send(args);
			return reply();
		}

		void send(String... args) throws IOException {
			sendPipelined(args);
		}

		/**
		 * Several commands in one write, so that their replies tend to arrive in one read
		 * too.
		 */
		void sendPipelined(String[]... commands) throws IOException {
			ByteArrayOutputStream request = new ByteArrayOutputStream();
			for (String[] args : commands) {
				RespClient.encode(request, args);
			}
			this.out.write(request.toByteArray());
			this.out.flush();
		}

		String reply() throws IOException {
			String line = line();
			if (line.startsWith("$") && !line.equals("$-1")) {
				int length = Integer.parseInt(line.substring(1));
				byte[] content = this.in.readNBytes(length + 2);
				if (content.length < length + 2) {
					throw new IOException("connection closed inside a bulk reply");
				}
				return new String(content, 0, length, StandardCharsets.UTF_8);
			}
			return line;
		}

		void assertNoReplyWithin(Duration silence) throws IOException {
			this.socket.setSoTimeout((int) silence.toMillis());
			try {
				int read = this.in.read();
				fail((read == -1) ? "the connection was closed" : "a reply arrived: " + (char) read);
			}
			catch (SocketTimeoutException ex) {
				// silence, with the connection still open
			}
			finally {
				this.socket.setSoTimeout(READ_TIMEOUT_MILLIS);
			}
		}

		/**
		 * The connection ends, by a reset or an end of stream, rather than by a timeout.
		 */
		void assertCut() {
			try {
				assertThat(this.in.read()).isEqualTo(-1);
			}
			catch (SocketTimeoutException ex) {
				fail("the connection stayed open");
			}
			catch (SocketException ex) {
				// reset
			}
			catch (IOException ex) {
				fail("unexpected " + ex);
			}
		}

		private String line() throws IOException {
			ByteArrayOutputStream line = new ByteArrayOutputStream();
			int previous = -1;
			while (true) {
				int next = this.in.read();
				if (next == -1) {
					throw new IOException("connection closed after '" + line + "'");
				}
				if (previous == '\r' && next == '\n') {
					byte[] bytes = line.toByteArray();
					return new String(bytes, 0, bytes.length - 1, StandardCharsets.UTF_8);
				}
				line.write(next);
				previous = next;
			}
		}

		@Override
		public void close() throws IOException {
			this.socket.close();
		}

	}

}
