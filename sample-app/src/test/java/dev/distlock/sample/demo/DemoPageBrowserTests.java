package dev.distlock.sample.demo;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo page in a real browser: headless Chromium (Debian's {@code chromium} and its
 * {@code chromedriver}) opens the sample's page, clicks the demo, and reads the result
 * the page shows for each run; then it saves a screenshot to
 * {@code docs/images/sample-demo.png}. Runs only with {@code -Pbrowser}, which CI always
 * runs; without the browser installed it fails, naming what is missing.
 */
@Tag("browser")
class DemoPageBrowserTests {

	private static final String CHROMIUM = System.getenv().getOrDefault("CHROMIUM", "/usr/bin/chromium");

	private static final String CHROMEDRIVER = System.getenv().getOrDefault("CHROMEDRIVER", "/usr/bin/chromedriver");

	private static final Path SCREENSHOT = Path.of("../docs/images/sample-demo.png");

	private static RunningSample sample;

	@BeforeAll
	static void start() {
		assertThat(new File(CHROMIUM)).as("Chromium (apt-get install chromium chromium-driver, or set CHROMIUM)")
			.canRead();
		assertThat(new File(CHROMEDRIVER)).as("chromedriver (apt-get install chromium-driver, or set CHROMEDRIVER)")
			.canRead();
		sample = new RunningSample();
	}

	@AfterAll
	static void stop() {
		if (sample != null) {
			sample.close();
		}
	}

	@Test
	void theDemoShowsOversellingWithoutTheLockAndNoneWithIt() throws IOException {
		Path profile = Files.createTempDirectory("distlock-chromium-");
		ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM)
			.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
					"--disable-background-networking", "--disable-component-update", "--disable-sync",
					"--user-data-dir=" + profile);
		ChromeDriverService service = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER))
			.usingAnyFreePort()
			.build();
		ChromeDriver browser = new ChromeDriver(service, options);
		try {
			browser.manage().window().setSize(new Dimension(1400, 1000));
			browser.get(sample.baseUrl() + "/");
			browser.findElement(By.id("run")).click();
			new WebDriverWait(browser, Duration.ofSeconds(120))
				.until(ExpectedConditions.or(ExpectedConditions.attributeToBe(By.id("status"), "data-state", "done"),
						ExpectedConditions.attributeToBe(By.id("status"), "data-state", "failed")));
			assertThat(browser.findElement(By.id("status")).getText()).startsWith("Done");
			WebElement unlocked = browser.findElement(By.id("result-unlocked"));
			WebElement locked = browser.findElement(By.id("result-locked"));
			long stock = Long.parseLong(browser.findElement(By.id("stock")).getDomProperty("value"));
			assertThat(Long.parseLong(unlocked.getDomAttribute("data-oversold"))).as("oversold without the lock")
				.isPositive();
			assertThat(Long.parseLong(locked.getDomAttribute("data-oversold"))).as("oversold with the lock").isZero();
			assertThat(Long.parseLong(locked.getDomAttribute("data-accepted"))).as("accepted with the lock")
				.isEqualTo(stock);
			assertThat(locked.getText()).contains("oversold", "wait p50");
			Files.createDirectories(SCREENSHOT.getParent());
			Files.copy(browser.getScreenshotAs(OutputType.FILE).toPath(), SCREENSHOT,
					StandardCopyOption.REPLACE_EXISTING);
		}
		finally {
			browser.quit();
		}
	}

}
