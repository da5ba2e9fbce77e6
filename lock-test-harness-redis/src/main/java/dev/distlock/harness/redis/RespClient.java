package dev.distlock.harness.redis;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.jspecify.annotations.Nullable;

/**
 * A small Redis client over plain sockets (RESP2), for the harness's resources: they must
 * be reachable from any store's tests, which may not have a Redis client library on their
 * class path. Thread-safe: each call borrows a connection from a pool and returns it, so
 * concurrent calls do not wait for each other. Replies come back as {@link Long},
 * {@link String}, {@link List} or null; an error reply throws.
 */
final class RespClient implements AutoCloseable {

	private final String host;

	private final int port;

	private final ConcurrentLinkedQueue<Connection> idle = new ConcurrentLinkedQueue<>();

	private volatile boolean closed;

	RespClient(String host, int port) {
		this.host = host;
		this.port = port;
	}

	/** Sends one command and returns its reply. */
	@Nullable Object call(String... args) {
		if (this.closed) {
			throw new IllegalStateException("Client of " + this.host + ":" + this.port + " is closed");
		}
		Connection connection = this.idle.poll();
		try {
			if (connection == null) {
				connection = new Connection(this.host, this.port);
			}
			Object reply = connection.call(args);
			this.idle.add(connection);
			connection = null;
			return reply;
		}
		catch (IOException ex) {
			throw new UncheckedIOException(
					"redis-server at " + this.host + ":" + this.port + " did not answer " + Arrays.toString(args), ex);
		}
		finally {
			if (connection != null) {
				connection.close();
			}
		}
	}

	/** {@link #call} for a command whose reply is an integer. */
	long number(String... args) {
		Object reply = call(args);
		if (reply instanceof Long number) {
			return number;
		}
		throw new IllegalStateException("Expected an integer reply to " + Arrays.toString(args) + ", got " + reply);
	}

	/** Appends one command, as RESP, to {@code request}. */
	static void encode(ByteArrayOutputStream request, String... args) {
		request.writeBytes(("*" + args.length + "\r\n").getBytes(StandardCharsets.UTF_8));
		for (String arg : args) {
			byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
			request.writeBytes(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.UTF_8));
			request.writeBytes(bytes);
			request.writeBytes("\r\n".getBytes(StandardCharsets.UTF_8));
		}
	}

	@Override
	public void close() {
		this.closed = true;
		Connection connection;
		while ((connection = this.idle.poll()) != null) {
			connection.close();
		}
	}

	private static final class Connection {

		private final Socket socket;

		private final InputStream in;

		private final OutputStream out;

		Connection(String host, int port) throws IOException {
			this.socket = new Socket();
			try {
				this.socket.connect(new InetSocketAddress(host, port), 5000);
				this.socket.setSoTimeout(10_000);
				this.socket.setTcpNoDelay(true);
				this.in = new BufferedInputStream(this.socket.getInputStream());
				this.out = new BufferedOutputStream(this.socket.getOutputStream());
			}
			catch (IOException ex) {
				this.socket.close();
				throw ex;
			}
		}

		@Nullable Object call(String... args) throws IOException {
			ByteArrayOutputStream request = new ByteArrayOutputStream();
			encode(request, args);
			this.out.write(request.toByteArray());
			this.out.flush();
			return read();
		}

		private @Nullable Object read() throws IOException {
			int type = this.in.read();
			String line = line();
			switch (type) {
				case '+':
					return line;
				case '-':
					throw new IllegalStateException("Redis error: " + line);
				case ':':
					return Long.parseLong(line);
				case '$': {
					int length = Integer.parseInt(line);
					if (length < 0) {
						return null;
					}
					byte[] bytes = this.in.readNBytes(length + 2);
					if (bytes.length < length + 2) {
						throw new IOException("Connection closed in a reply");
					}
					return new String(bytes, 0, length, StandardCharsets.UTF_8);
				}
				case '*': {
					int count = Integer.parseInt(line);
					if (count < 0) {
						return null;
					}
					List<@Nullable Object> items = new ArrayList<>(count);
					for (int i = 0; i < count; i++) {
						items.add(read());
					}
					return items;
				}
				case -1:
					throw new IOException("Connection closed");
				default:
					throw new IOException("Unexpected reply type '" + (char) type + "'");
			}
		}

		private String line() throws IOException {
			StringBuilder line = new StringBuilder();
			int c;
			while ((c = this.in.read()) != '\r') {
				if (c == -1) {
					throw new IOException("Connection closed");
				}
				line.append((char) c);
			}
			if (this.in.read() != '\n') {
				throw new IOException("Malformed reply line: " + line);
			}
			return line.toString();
		}

		void close() {
			try {
				this.socket.close();
			}
			catch (IOException ex) {
				// gone already
			}
		}

	}

}
