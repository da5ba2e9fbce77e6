package dev.distlock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts the commands clients send, exactly, with {@code MONITOR}: unlike
 * {@code INFO commandstats}, it tells a client's command from one a Lua script runs
 * ({@code [0 lua]}). The monitoring connection's own traffic is not counted.
 */
final class CommandMonitor implements AutoCloseable {

	private final Socket socket;

	private final Map<String, Long> byCommand = new TreeMap<>();

	private final AtomicLong total = new AtomicLong();

	private final Thread reader;

	CommandMonitor(int port) throws IOException {
		this.socket = new Socket("127.0.0.1", port);
		OutputStream out = this.socket.getOutputStream();
		out.write("MONITOR\r\n".getBytes(StandardCharsets.US_ASCII));
		out.flush();
		BufferedReader in = new BufferedReader(
				new InputStreamReader(this.socket.getInputStream(), StandardCharsets.UTF_8));
		in.readLine();
		this.reader = new Thread(() -> read(in), "monitor");
		this.reader.setDaemon(true);
		this.reader.start();
	}

	private void read(BufferedReader in) {
		try {
			String line;
			while ((line = in.readLine()) != null) {
				int bracket = line.indexOf(']');
				if (!line.startsWith("+") || bracket < 0 || line.substring(0, bracket).contains("lua")) {
					continue;
				}
				int quote = line.indexOf('"', bracket);
				int close = (quote >= 0) ? line.indexOf('"', quote + 1) : -1;
				String command = (close > quote) ? line.substring(quote + 1, close).toLowerCase() : "?";
				synchronized (this.byCommand) {
					this.byCommand.merge(command, 1L, Long::sum);
				}
				this.total.incrementAndGet();
			}
		}
		catch (IOException ex) {
			// closed
		}
	}

	/** Client commands seen so far, by command. */
	Map<String, Long> snapshot() {
		synchronized (this.byCommand) {
			return new TreeMap<>(this.byCommand);
		}
	}

	long total() {
		return this.total.get();
	}

	@Override
	public void close() throws IOException {
		this.socket.close();
	}

}
