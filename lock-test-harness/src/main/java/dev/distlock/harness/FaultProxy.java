package dev.distlock.harness;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy on a free loopback port in front of one server (normally a a
 * {@code RedisServer}), with faults that a test switches on and off while clients stay
 * connected: slow replies, a network partition, a reply lost after its request was
 * applied, and cut connections. It exists because the failures a lock library must
 * survive are the ones between the client and Redis, which a real {@code redis-server}
 * alone cannot produce and a mock would only imitate.
 *
 * <pre>
 * try (RedisServer redis = RedisServer.start(); FaultProxy proxy = FaultProxy.start(redis.host(), redis.port())) {
 *     connect the client to proxy.host():proxy.port()
 *     proxy.dropNextReply();   // the next request is applied, its reply never arrives
 *     ...
 *     proxy.heal();
 * }
 * </pre>
 *
 * <p>
 * Plain Java, blocking sockets, three daemon threads per client connection (requests,
 * replies read, replies written) and one that accepts. Every control may be called from
 * any thread at any time; each takes effect for bytes the proxy handles after the call.
 * Bytes are never reordered within a connection, so the server sees requests, and the
 * client sees replies, in the order they were sent.
 */
public final class FaultProxy implements AutoCloseable {

	private static final int BUFFER_SIZE = 16 * 1024;

	private volatile InetSocketAddress target;

	private final ServerSocket listener;

	private final Thread acceptor;

	private final Set<Link> links = ConcurrentHashMap.newKeySet();

	private final AtomicInteger linkIds = new AtomicInteger();

	/**
	 * Guards {@link #blackholed}, {@link #holdingNew}, each link's {@code held} and
	 * {@link #closed}; pumps wait on it while they may not pass bytes.
	 */
	private final Object gate = new Object();

	private boolean blackholed;

	/** Whether connections accepted from now on pass nothing until {@link #heal()}. */
	private boolean holdingNew;

	private volatile boolean closed;

	private volatile long replyDelayNanos;

	/**
	 * Set by {@link #dropNextReply()}, claimed by the first request forwarded afterwards.
	 */
	private final AtomicBoolean dropArmed = new AtomicBoolean();

	private final AtomicLong droppedReplies = new AtomicLong();

	/** Whether the connection that loses the armed reply is cut there. */
	private volatile boolean resetOnDrop;

	private FaultProxy(InetSocketAddress target, ServerSocket listener) {
		this.target = target;
		this.listener = listener;
		this.acceptor = new Thread(this::acceptLoop, "fault-proxy-" + listener.getLocalPort() + "-accept");
		this.acceptor.setDaemon(true);
	}

	/**
	 * Starts a proxy on a free loopback port that forwards every connection to
	 * {@code targetHost:targetPort}. The target is connected to once per client
	 * connection, when the client connects.
	 * @param targetHost host of the real server
	 * @param targetPort port of the real server
	 * @return the running proxy; close it when done
	 */
	public static FaultProxy start(String targetHost, int targetPort) {
		ServerSocket listener;
		try {
			listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free loopback port for the fault proxy", ex);
		}
		FaultProxy proxy = new FaultProxy(new InetSocketAddress(targetHost, targetPort), listener);
		proxy.acceptor.start();
		return proxy;
	}

	/**
	 * The host clients connect to instead of the real server's: always the loopback
	 * address, so no other machine can reach the proxy.
	 * @return the proxy's host
	 */
	public String host() {
		return this.listener.getInetAddress().getHostAddress();
	}

	/**
	 * The port clients connect to instead of the real server's; chosen free when the
	 * proxy started.
	 * @return the proxy's port
	 */
	public int port() {
		return this.listener.getLocalPort();
	}

	/**
	 * Holds every chunk of bytes the server sends for {@code delay} after the proxy read
	 * it, then passes it on: a slow network or a slow server, as the client sees it.
	 * Requests still reach the server at once, so a write is applied long before its
	 * client learns of it. Each chunk is delayed from its own arrival, so replies that
	 * follow each other are not delayed cumulatively; chunks already held keep the delay
	 * they arrived under (as packets already on a slow link would), also across
	 * {@link #heal()}.
	 * @param delay how long to hold each reply chunk; zero for none
	 */
	public void delayReplies(Duration delay) {
		if (delay.isNegative()) {
			throw new IllegalArgumentException("delay must not be negative but was " + delay);
		}
		this.replyDelayNanos = delay.toNanos();
	}

	/**
	 * Stops forwarding in both directions while keeping every connection open: a network
	 * partition. Clients see no error and no reply, only their own timeouts; new
	 * connections are accepted but pass nothing either. Bytes are held, not discarded, as
	 * TCP retransmits them across a partition: on {@link #heal()} the held requests reach
	 * the server (and are applied, late) and their replies reach the clients, so protocol
	 * streams stay in step. To model a partition that also kills the connections, call
	 * {@link #disconnectAll()} as well.
	 */
	public void blackhole() {
		synchronized (this.gate) {
			this.blackholed = true;
		}
	}

	/**
	 * Lets the connections already open pass bytes as before, while each connection
	 * accepted from now on passes nothing, either way, until {@link #heal()}: a client's
	 * new connection (a subscription's, a reconnection) stuck on a bad route while its
	 * others work. As with {@link #blackhole()}, held bytes are passed on at the heal.
	 */
	public void holdNewConnections() {
		synchronized (this.gate) {
			this.holdingNew = true;
		}
	}

	/**
	 * Arms a one-shot lost reply: the next request any client sends through the proxy
	 * reaches the server and is applied, but its reply is discarded. The client waits in
	 * vain and times out, not knowing its write took effect: the case an acquire must
	 * clean up after.
	 *
	 * <p>
	 * Race-free: the proxy counts the requests it forwards and the replies it reads on
	 * each connection (Redis answers each request once, in order), and the claiming
	 * request's reply number is recorded before its bytes leave the proxy. So exactly
	 * that reply is dropped, never a reply to an earlier request still on its way,
	 * however the bytes are split into reads: a reply such as {@code :12345\r\n} or
	 * {@code -NOSCRIPT ...\r\n} to an {@code EVALSHA} vanishes whole, and a reply that
	 * shares a read with the next one goes alone. "The next request" is the first one to
	 * complete in the next chunk of bytes read from any client after this call. RESP3
	 * push messages answer no request and are never dropped; traffic that is not one
	 * reply per request (subscribers, {@code CLIENT REPLY OFF}) is not supported.
	 *
	 * <p>
	 * RESP carries no request ids, so a client that keeps using the connection afterwards
	 * is one reply out of step: Lettuce, for one, hands each later reply to the command
	 * before it. Real TCP loses no bytes without breaking the connection, so follow the
	 * lost reply with {@link #disconnectAll()} before relying on that client again.
	 */
	public void dropNextReply() {
		this.dropArmed.set(true);
	}

	/**
	 * As {@link #dropNextReply()}, but the connection that loses the reply is cut right
	 * there, as real TCP would: its client receives every reply before the lost one, then
	 * a reset, and never a reply after it, so it cannot fall out of step. The other
	 * connections are untouched.
	 */
	public void dropNextReplyAndReset() {
		this.resetOnDrop = true;
		this.dropArmed.set(true);
	}

	/**
	 * How many replies {@link #dropNextReply()} has discarded so far, so a test can tell
	 * the fault actually hit.
	 * @return replies dropped since the proxy started
	 */
	public long droppedReplies() {
		return this.droppedReplies.get();
	}

	/**
	 * Back to normal: no reply delay for bytes that arrive from now on, no partition
	 * (held bytes flow on, in order), and an armed lost reply that no request has claimed
	 * yet is disarmed. A reply already being dropped is dropped to its end, and chunks
	 * already delayed keep their delay, so no client ever sees a partial or reordered
	 * reply. Connections stay open.
	 */
	public void heal() {
		this.replyDelayNanos = 0;
		this.dropArmed.set(false);
		this.resetOnDrop = false;
		synchronized (this.gate) {
			this.blackholed = false;
			this.holdingNew = false;
			this.links.forEach((link) -> link.held = false);
			this.gate.notifyAll();
		}
	}

	/**
	 * Points the proxy at another server, as a failover moves a virtual IP or a DNS name:
	 * connections opened from now on go to {@code host:port}; connections already open
	 * stay with the old server until {@link #disconnectAll()} cuts them.
	 * @param host host of the new server
	 * @param port port of the new server
	 */
	public void retarget(String host, int port) {
		this.target = new InetSocketAddress(host, port);
	}

	/**
	 * Closes every connection open through the proxy, on both sides, with a TCP reset and
	 * without passing on bytes still held: a cut network as the client notices it, by a
	 * broken connection rather than a timeout. The proxy keeps accepting, so a client
	 * that reconnects gets a fresh connection.
	 */
	public void disconnectAll() {
		for (Link link : this.links) {
			link.close();
		}
	}

	/**
	 * How many client connections are currently open through the proxy, so a test can
	 * wait for a client to (re)connect.
	 * @return open connections
	 */
	public int openConnections() {
		return this.links.size();
	}

	/**
	 * Stops accepting (a client connecting afterwards is refused) and cuts every
	 * connection; idempotent.
	 */
	@Override
	public void close() {
		synchronized (this.gate) {
			if (this.closed) {
				return;
			}
			this.closed = true;
			this.gate.notifyAll();
		}
		try {
			this.listener.close();
		}
		catch (IOException ex) {
			// closing anyway
		}
		// The JDK releases a listening socket only once a thread blocked in accept() has
		// left it; until then the
		// port still accepts. Waiting for the acceptor makes "closed" mean refused.
		try {
			this.acceptor.join(5000);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		disconnectAll();
	}

	@Override
	public String toString() {
		return "FaultProxy[" + host() + ":" + port() + " -> " + this.target.getHostString() + ":"
				+ this.target.getPort() + "]";
	}

	private void acceptLoop() {
		while (!this.closed) {
			Socket client;
			try {
				client = this.listener.accept();
			}
			catch (IOException ex) {
				return;
			}
			Socket server = new Socket();
			try {
				server.connect(this.target, 5000);
			}
			catch (IOException ex) {
				closeQuietly(client);
				closeQuietly(server);
				continue;
			}
			Link link = new Link(this.linkIds.incrementAndGet(), client, server);
			synchronized (this.gate) {
				link.held = this.holdingNew;
			}
			this.links.add(link);
			if (this.closed) {
				link.close();
				return;
			}
			link.start();
		}
	}

	/**
	 * Waits while blackholed or while {@code link} is held; false once the proxy is
	 * closed.
	 */
	private boolean awaitPassable(Link link) {
		synchronized (this.gate) {
			while ((this.blackholed || link.held) && !this.closed) {
				try {
					this.gate.wait();
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return false;
				}
			}
			return !this.closed;
		}
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// nothing to do
		}
	}

	/** A chunk of reply bytes and when it may be passed on. */
	private record Chunk(byte[] bytes, long dueNanos) {
	}

	/** One client connection and its connection to the server. */
	private final class Link {

		private static final Chunk END = new Chunk(new byte[0], 0);

		private final Socket client;

		private final Socket server;

		private final Thread requests;

		private final Thread replyReader;

		private final Thread replyWriter;

		private final BlockingQueue<Chunk> replies = new LinkedBlockingQueue<>();

		/**
		 * Indexes (counted from 0 on this link) of the replies to drop, in rising order.
		 * An index is added before the request it belongs to is written to the server, so
		 * before its reply can be read.
		 */
		private final Queue<Long> dropIndexes = new ConcurrentLinkedQueue<>();

		private final AtomicBoolean closed = new AtomicBoolean();

		/** Accepted while new connections were held; guarded by the proxy's gate. */
		boolean held;

		Link(int id, Socket client, Socket server) {
			this.client = client;
			this.server = server;
			String prefix = "fault-proxy-" + port() + "-" + id + "-";
			this.requests = daemon(this::forwardRequests, prefix + "requests");
			this.replyReader = daemon(this::readReplies, prefix + "reply-reader");
			this.replyWriter = daemon(this::writeReplies, prefix + "reply-writer");
		}

		private Thread daemon(Runnable task, String name) {
			Thread thread = new Thread(task, name);
			thread.setDaemon(true);
			return thread;
		}

		void start() {
			try {
				this.client.setTcpNoDelay(true);
				this.server.setTcpNoDelay(true);
			}
			catch (SocketException ex) {
				close();
				return;
			}
			this.requests.start();
			this.replyReader.start();
			this.replyWriter.start();
		}

		/**
		 * Passes client bytes on as they come, counting complete requests on the side.
		 */
		private void forwardRequests() {
			byte[] buffer = new byte[BUFFER_SIZE];
			Framer framer = new Framer(RespFrames::requestEnd);
			long completed = 0;
			try (InputStream in = this.client.getInputStream(); OutputStream out = this.server.getOutputStream()) {
				int read;
				while ((read = in.read(buffer)) != -1) {
					if (!awaitPassable(this)) {
						break;
					}
					if (FaultProxy.this.dropArmed.compareAndSet(true, false)) {
						// the first request that completes from here on is the one whose
						// reply goes
						this.dropIndexes.add(completed);
					}
					out.write(buffer, 0, read);
					out.flush();
					completed += framer.feed(buffer, read, (frame, from, to) -> {
					});
				}
			}
			catch (IOException ex) {
				// the connection was closed or cut
			}
			finally {
				close();
			}
		}

		/**
		 * Reads whole replies, drops the ones marked for it, and queues the rest with
		 * their due time.
		 */
		private void readReplies() {
			byte[] buffer = new byte[BUFFER_SIZE];
			Framer framer = new Framer(RespFrames::end);
			long[] index = { 0 };
			try (InputStream in = this.server.getInputStream()) {
				int read;
				while ((read = in.read(buffer)) != -1) {
					long arrived = System.nanoTime();
					ByteArrayOutputStream kept = new ByteArrayOutputStream();
					boolean[] cut = { false };
					framer.feed(buffer, read, (frame, from, to) -> {
						if (cut[0]) {
							return;
						}
						// push messages (RESP3 '>') answer no request
						if (frame[from] == '>' || !claimDrop(index[0]++)) {
							kept.write(frame, from, to - from);
						}
						else if (FaultProxy.this.resetOnDrop) {
							cut[0] = true;
						}
					});
					if (kept.size() > 0) {
						this.replies.add(new Chunk(kept.toByteArray(), arrived + FaultProxy.this.replyDelayNanos));
					}
					if (cut[0]) {
						// the writer passes on what came before, then resets the link
						return;
					}
				}
			}
			catch (IOException ex) {
				// the connection was closed or cut
			}
			finally {
				this.replies.add(END);
			}
		}

		private boolean claimDrop(long replyIndex) {
			Long next;
			while ((next = this.dropIndexes.peek()) != null && next < replyIndex) {
				this.dropIndexes.poll();
			}
			if (next != null && next == replyIndex) {
				this.dropIndexes.poll();
				FaultProxy.this.droppedReplies.incrementAndGet();
				return true;
			}
			return false;
		}

		private void writeReplies() {
			try (OutputStream out = this.client.getOutputStream()) {
				while (true) {
					Chunk chunk = this.replies.take();
					if (chunk == END) {
						break;
					}
					long wait;
					while ((wait = chunk.dueNanos() - System.nanoTime()) > 0) {
						LockSupport.parkNanos(wait);
						if (Thread.currentThread().isInterrupted()) {
							return;
						}
					}
					if (!awaitPassable(this)) {
						break;
					}
					out.write(chunk.bytes());
					out.flush();
				}
			}
			catch (IOException ex) {
				// the connection was closed or cut
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			finally {
				close();
			}
		}

		void close() {
			if (!this.closed.compareAndSet(false, true)) {
				return;
			}
			FaultProxy.this.links.remove(this);
			reset(this.client);
			reset(this.server);
			this.replies.add(END);
			this.requests.interrupt();
			this.replyWriter.interrupt();
		}

		/** Closes with RST, discarding unsent bytes, as a cut connection would. */
		private void reset(Socket socket) {
			try {
				socket.setSoLinger(true, 0);
			}
			catch (SocketException ex) {
				// already closed
			}
			closeQuietly(socket);
		}

	}

	/**
	 * Where a frame that starts at {@code from} ends: the index just past it, or -1 if
	 * incomplete.
	 */
	@FunctionalInterface
	private interface FrameEnd {

		int end(byte[] bytes, int from, int limit);

	}

	@FunctionalInterface
	private interface FrameSink {

		void accept(byte[] bytes, int from, int to);

	}

	/**
	 * Cuts a byte stream into whole frames, keeping an incomplete last frame for the next
	 * read.
	 */
	private static final class Framer {

		private final FrameEnd frameEnd;

		private byte[] pending = new byte[0];

		Framer(FrameEnd frameEnd) {
			this.frameEnd = frameEnd;
		}

		/**
		 * Hands every frame completed by {@code read} bytes of {@code chunk} to
		 * {@code sink}; returns how many.
		 */
		int feed(byte[] chunk, int read, FrameSink sink) {
			byte[] bytes = Arrays.copyOf(this.pending, this.pending.length + read);
			System.arraycopy(chunk, 0, bytes, this.pending.length, read);
			int position = 0;
			int frames = 0;
			int end;
			while (position < bytes.length && (end = this.frameEnd.end(bytes, position, bytes.length)) > position) {
				sink.accept(bytes, position, end);
				frames++;
				position = end;
			}
			this.pending = Arrays.copyOfRange(bytes, position, bytes.length);
			return frames;
		}

	}

	/**
	 * Where one RESP frame ends. Knows the RESP2 and RESP3 types Redis sends; bytes that
	 * are not RESP count as one frame up to the end of what is at hand.
	 */
	private static final class RespFrames {

		private RespFrames() {
		}

		/**
		 * As {@link #end}, for a request: a RESP array, or an inline command ending at a
		 * line feed.
		 */
		static int requestEnd(byte[] bytes, int from, int limit) {
			if (from < limit && bytes[from] != '*') {
				for (int i = from; i < limit; i++) {
					if (bytes[i] == '\n') {
						return i + 1;
					}
				}
				return -1;
			}
			return end(bytes, from, limit);
		}

		/**
		 * The index just past the reply that starts at {@code from}, or -1 if
		 * {@code bytes} up to {@code limit} hold only part of it.
		 */
		static int end(byte[] bytes, int from, int limit) {
			if (from >= limit) {
				return -1;
			}
			int lineEnd = lineEnd(bytes, from + 1, limit);
			if (lineEnd < 0) {
				return -1;
			}
			int next = lineEnd + 2;
			switch (bytes[from]) {
				case '+', '-', ':', '_', ',', '#', '(' -> {
					return next;
				}
				case '$', '!', '=' -> {
					long length = number(bytes, from + 1, lineEnd);
					if (length == Long.MIN_VALUE) {
						return limit;
					}
					if (length < 0) {
						return next;
					}
					long end = next + length + 2;
					return (end <= limit) ? (int) end : -1;
				}
				case '*', '~', '>' -> {
					return elements(bytes, next, limit, number(bytes, from + 1, lineEnd), 1);
				}
				case '%' -> {
					return elements(bytes, next, limit, number(bytes, from + 1, lineEnd), 2);
				}
				case '|' -> {
					// attributes come before the reply they describe, and count as part
					// of it
					int end = elements(bytes, next, limit, number(bytes, from + 1, lineEnd), 2);
					return (end < 0) ? -1 : end(bytes, end, limit);
				}
				default -> {
					return limit;
				}
			}
		}

		private static int elements(byte[] bytes, int from, int limit, long count, int perEntry) {
			if (count == Long.MIN_VALUE) {
				return limit;
			}
			int position = from;
			for (long i = 0; i < count * perEntry; i++) {
				position = end(bytes, position, limit);
				if (position < 0) {
					return -1;
				}
			}
			return position;
		}

		private static int lineEnd(byte[] bytes, int from, int limit) {
			for (int i = from; i + 1 < limit; i++) {
				if (bytes[i] == '\r' && bytes[i + 1] == '\n') {
					return i;
				}
			}
			return -1;
		}

		/**
		 * The decimal number in {@code bytes[from, to)}, or {@link Long#MIN_VALUE} if it
		 * is not one.
		 */
		private static long number(byte[] bytes, int from, int to) {
			try {
				return Long.parseLong(new String(bytes, from, to - from, StandardCharsets.US_ASCII));
			}
			catch (NumberFormatException ex) {
				return Long.MIN_VALUE;
			}
		}

	}

}
