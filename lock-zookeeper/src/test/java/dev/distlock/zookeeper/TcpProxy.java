package dev.distlock.zookeeper;

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

/**
 * A byte-for-byte TCP proxy on a free loopback port, for faults between a ZooKeeper
 * client and its server: a partition ({@link #blackhole()}: connections stay open and
 * pass nothing, bytes are held as TCP would retransmit them) and a reset of every
 * connection. The fault proxy of lock-test-support frames Redis replies, so it cannot
 * carry ZooKeeper's protocol.
 */
final class TcpProxy implements AutoCloseable {

	private final InetSocketAddress target;

	private final ServerSocket listener;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private final Object gate = new Object();

	private volatile boolean blackholed;

	private volatile boolean closed;

	private TcpProxy(InetSocketAddress target, ServerSocket listener) {
		this.target = target;
		this.listener = listener;
	}

	static TcpProxy start(int targetPort) {
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

	String connectString() {
		return "127.0.0.1:" + this.listener.getLocalPort();
	}

	/** Passes nothing either way, keeping connections open, until {@link #heal()}. */
	void blackhole() {
		this.blackholed = true;
	}

	void heal() {
		synchronized (this.gate) {
			this.blackholed = false;
			this.gate.notifyAll();
		}
	}

	/** Resets every open connection; new ones are accepted as before. */
	void disconnectAll() {
		for (Socket socket : this.sockets) {
			closeQuietly(socket);
		}
		this.sockets.clear();
	}

	private void accept() {
		while (!this.closed) {
			try {
				Socket client = this.listener.accept();
				Socket server = new Socket();
				server.connect(this.target, 5000);
				this.sockets.add(client);
				this.sockets.add(server);
				daemon(() -> pump(client, server), "tcp-proxy-up").start();
				daemon(() -> pump(server, client), "tcp-proxy-down").start();
			}
			catch (IOException ex) {
				// closed, or the server refused: the client retries
			}
		}
	}

	private void pump(Socket from, Socket to) {
		byte[] buffer = new byte[8192];
		try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			int read;
			while ((read = in.read(buffer)) != -1) {
				synchronized (this.gate) {
					while (this.blackholed && !this.closed) {
						this.gate.wait();
					}
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
