package dev.distlock.autoconfigure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A fenced code block of the user documentation ({@code README.md} and
 * {@code docs/**.md}), with what the prose before it says about versions.
 *
 * @param page the page, relative to the repository root
 * @param line the line of the opening fence, counted from 1
 * @param language the fence's info string ({@code xml}, {@code yaml}...), or empty
 * @param text the block's lines, without the fences and the fence's indentation
 * @param bomNoted whether a paragraph before the block says that versions come from
 * {@code lock-bom} and links to the page that shows the import
 */
record DocSnippet(Path page, int line, String language, String text, boolean bomNoted) {

	/** The section that shows how to import the BOM, as pages link to it. */
	static final String BOM_SECTION = "usage.md#adding-distlock-to-a-build";

	private static final Pattern FENCE = Pattern.compile("^(\\s*)```\\s*(\\S*)\\s*$");

	private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]*)\\)");

	/** Every fenced block of the README and the pages under {@code docs}, in order. */
	static List<DocSnippet> readAll(Path root) {
		List<DocSnippet> snippets = new ArrayList<>();
		for (Path page : pages(root)) {
			snippets.addAll(read(root, page));
		}
		return snippets;
	}

	/** Where the block is, as a reader finds it: {@code docs/stores/jdbc.md:21}. */
	String location() {
		return this.page.toString().replace('\\', '/') + ":" + this.line;
	}

	@Override
	public String toString() {
		return location() + " (" + this.language + ")";
	}

	private static List<Path> pages(Path root) {
		List<Path> pages = new ArrayList<>();
		pages.add(root.resolve("README.md"));
		try (Stream<Path> docs = Files.walk(root.resolve("docs"))) {
			docs.filter((path) -> path.toString().endsWith(".md")).sorted().forEach(pages::add);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return pages;
	}

	private static List<DocSnippet> read(Path root, Path page) {
		List<String> lines = lines(page);
		Path relative = root.relativize(page);
		List<DocSnippet> snippets = new ArrayList<>();
		StringBuilder paragraph = new StringBuilder();
		boolean bomNoted = false;
		for (int i = 0; i < lines.size(); i++) {
			Matcher fence = FENCE.matcher(lines.get(i));
			if (!fence.matches()) {
				String line = lines.get(i).trim();
				paragraph.append(line.isEmpty() ? "\n" : line + " ");
				continue;
			}
			bomNoted = bomNoted || notesTheBom(root, page, paragraph.toString());
			paragraph.setLength(0);
			int indent = fence.group(1).length();
			StringBuilder text = new StringBuilder();
			int end = i + 1;
			while (end < lines.size() && !lines.get(end).trim().equals("```")) {
				String line = lines.get(end);
				text.append(line, Math.min(indent, leadingSpaces(line)), line.length()).append('\n');
				end++;
			}
			snippets.add(new DocSnippet(relative, i + 1, fence.group(2), text.toString(), bomNoted));
			i = end;
		}
		return snippets;
	}

	/**
	 * Whether one of these paragraphs names {@code lock-bom} and links to the section
	 * that shows its import, on the page where that section is.
	 */
	private static boolean notesTheBom(Path root, Path page, String prose) {
		for (String paragraph : prose.split("\n")) {
			if (!paragraph.contains("`lock-bom`")) {
				continue;
			}
			Matcher link = LINK.matcher(paragraph);
			while (link.find()) {
				String target = link.group(1);
				if (target.endsWith(BOM_SECTION)) {
					String file = target.substring(0, target.indexOf('#'));
					Path linked = page.getParent().resolve(file).normalize();
					if (linked.equals(root.resolve("docs/usage.md").normalize())) {
						return true;
					}
				}
			}
		}
		return false;
	}

	private static int leadingSpaces(String line) {
		int count = 0;
		while (count < line.length() && line.charAt(count) == ' ') {
			count++;
		}
		return count;
	}

	private static List<String> lines(Path page) {
		try {
			return Files.readAllLines(page, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
