package dev.distlock.autoconfigure.endpoint;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;

import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;

/**
 * A web application with the starter's auto-configuration, the in-memory store and the
 * Actuator, for the endpoint's HTTP tests; and the HTTP calls they make.
 */
@SpringBootApplication(exclude = DataSourceAutoConfiguration.class)
class EndpointTestApplication {

	private static final HttpClient CLIENT = HttpClient.newHttpClient();

	static HttpResponse<String> call(String method, int port, String path) throws Exception {
		return CLIENT.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	static Map<String, Object> locks(int port) throws Exception {
		HttpResponse<String> response = call("GET", port, "/actuator/distributedlocks");
		if (response.statusCode() != 200) {
			throw new AssertionError(
					"GET /actuator/distributedlocks: " + response.statusCode() + " " + response.body());
		}
		System.out.println("GET /actuator/distributedlocks\n" + response.body());
		return JsonParserFactory.getJsonParser().parseMap(response.body());
	}

}
