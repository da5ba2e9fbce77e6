package dev.distlock.harness;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A byte-for-byte TCP proxy on a free loopback port (127.0.0.1), for faults between a
 * client and a server of any protocol (PostgreSQL, ZooKeeper): a partition
 * ({@link #blackhole()}: connections stay open and pass nothing, bytes are held as TCP
 * would retransmit them), replies held while requests pass ({@link #holdReplies()}; a
 * reset then loses them), latency ({@link #delay}: every chunk of bytes, either way, is
 * held that long), a reset of every connection, and a lost reply
 * ({@link #dropNextReplyAndReset()}: the next bytes the server sends are dropped and
 * their connection reset, after the server ran what it answers). {@link FaultProxy}
 * frames Redis replies, so it cannot carry other protocols.
 */
public final class TcpProxy implements AutoCloseable {

	private final InetSocketAddress target;

	private final ServerSocket listener;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final Object gate = new Object();

	private volatile boolean blackholed;

	private volatile boolean repliesHeld;

	private volatile long delayMillis;

	private final AtomicBoolean dropNextReply = new AtomicBoolean();

	private final AtomicLong droppedReplies = new AtomicLong();

	private volatile boolean closed;

	private TcpProxy(InetSocketAddress target, ServerSocket listener) {
		this.target = target;
		this.listener = listener;
	}

	/** A proxy to 127.0.0.1:{@code targetPort}; it connects to the server per client. */
	public static TcpProxy start(int targetPort) {
		try {
			TcpProxy proxy = new TcpProxy(new InetSocketAddress("127.0.0.1", targetPort),
					new ServerSocket(0, 50, InetAddress.getLoopbackAddress()));
			daemon(proxy::accept, "tcp-proxy-accept").start();
			return proxy;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The proxy's port on 127.0.0.1, for the client. */
	public int port() {
		return this.listener.getLocalPort();
	}

	/** {@code 127.0.0.1:<port>}. */
	public String connectString() {
		return "127.0.0.1:" + port();
	}

	/** Passes nothing either way, keeping connections open, until {@link #heal()}. */
	public void blackhole() {
		this.blackholed = true;
	}

	/**
	 * Passes requests on but holds every byte from the server, until {@link #heal()}: the
	 * server applies what it is sent, and its replies wait. {@link #disconnectAll()}
	 * before the heal loses them.
	 */
	public void holdReplies() {
		this.repliesHeld = true;
	}

	/** Ends a {@link #blackhole()}, {@link #holdReplies()} and any {@link #delay}. */
	public void heal() {
		synchronized (this.gate) {
			this.blackholed = false;
			this.repliesHeld = false;
			this.delayMillis = 0;
			this.gate.notifyAll();
		}
	}

	/**
	 * Holds every chunk of bytes, either way, {@code millis} before passing it on, until
	 * {@link #heal()}.
	 */
	public void delay(long millis) {
		this.delayMillis = millis;
	}

	/**
	 * Drops the next bytes any server sends back (a reply to whatever statement or
	 * command comes next, which the server has run) and resets their connection, as a
	 * connection that breaks after the request went out would.
	 */
	public void dropNextReplyAndReset() {
		this.dropNextReply.set(true);
	}

	/** Replies dropped by {@link #dropNextReplyAndReset()} so far. */
	public long droppedReplies() {
		return this.droppedReplies.get();
	}

	/** Resets every open connection; new ones are accepted as before. */
	public void disconnectAll() {
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
		this.sockets.clear();
	}

	private void accept() {
		while (!this.closed) {
			Socket client = null;
			try {
				client = this.listener.accept();
				Socket server = new Socket();
				server.connect(this.target, 5000);
				this.sockets.add(client);
				this.sockets.add(server);
				Socket accepted = client;
				daemon(() -> pump(accepted, server, false), "tcp-proxy-up").start();
				daemon(() -> pump(server, accepted, true), "tcp-proxy-down").start();
			}
			catch (IOException ex) {
				// Closed, or the server refused: the client is closed as the server's
				// refusal would have, so that it retries rather than wait for a greeting
				// that never comes.
				if (client != null) {
					closeQuietly(client);
				}
			}
		}
	}

	/**
	 * @param replies whether the bytes go from the server to the client
	 */
	private void pump(Socket from, Socket to, boolean replies) {
		byte[] buffer = new byte[8192];
		try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			int read;
			while ((read = in.read(buffer)) != -1) {
				synchronized (this.gate) {
					while ((this.blackholed || (replies && this.repliesHeld)) && !this.closed) {
						this.gate.wait();
					}
				}
				long delay = this.delayMillis;
				if (delay > 0) {
					// the injected latency itself
					Thread.sleep(delay);
				}
				if (replies && this.dropNextReply.compareAndSet(true, false)) {
					this.droppedReplies.incrementAndGet();
					break;
				}
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException ex) {
			// reset or closed
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		finally {
			closeQuietly(from);
			closeQuietly(to);
		}
	}

	private static Thread daemon(Runnable task, String name) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		return thread;
	}

	private static void closeQuietly(Socket socket) {
		try {
			socket.close();
		}
		catch (IOException ex) {
			// already closed
		}
	}

	@Override
	public void close() throws IOException {
		this.closed = true;
		heal();
		this.listener.close();
		disconnectAll();
	}

}
