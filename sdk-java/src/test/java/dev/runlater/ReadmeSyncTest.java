package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Keeps README.md's example identical to the code {@link ExampleTest} runs. */
class ReadmeSyncTest {
  @Test
  void readmeExampleMatchesExampleTest() throws IOException {
    List<String> readme = Files.readAllLines(Path.of("README.md"));
    int start = readme.indexOf("```java") + 1;
    int end = start;
    while (!readme.get(end).contains("run until shutdown")) {
      end++;
    }
    List<String> fromReadme =
        readme.subList(start, end + 1).stream()
            .map(l -> l.strip().replace("\"127.0.0.1:8080\"", "target"))
            .toList();

    List<String> test = Files.readAllLines(Path.of("src/test/java/dev/runlater/ExampleTest.java"));
    int from = indexOf(test, "README example start") + 1;
    int to = indexOf(test, "README example end");
    List<String> fromTest = test.subList(from, to).stream().map(String::strip).toList();

    assertEquals(fromTest, fromReadme);
  }

  private static int indexOf(List<String> lines, String marker) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(marker)) {
        return i;
      }
    }
    throw new AssertionError("marker not found: " + marker);
  }
}
