package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** {@link JsonCodec}: JSON bodies through Jackson, and a clear error without it. */
class JsonCodecTest extends ServerTest {
  /** A body as an application would define it. */
  public record Email(String to, List<String> cc) {}

  @Test
  void encodesAndDecodesRecords() {
    byte[] body = JsonCodec.encode(new Email("ada@example.com", List.of("grace@example.com")));
    assertEquals(
        "{\"to\":\"ada@example.com\",\"cc\":[\"grace@example.com\"]}",
        new String(body, StandardCharsets.UTF_8));
    assertEquals(
        new Email("ada@example.com", List.of("grace@example.com")),
        JsonCodec.decode(body, Email.class));
    assertEquals(Map.of("n", 1), JsonCodec.decode("{\"n\":1}".getBytes(), Map.class));
  }

  @Test
  void aJsonBodyTravelsThroughTheServer() {
    String q = newQueue("json", QueueConfig.defaults());
    client.enqueue(JobSpec.of(q, JsonCodec.encode(new Email("linus@example.com", List.of()))));
    DequeuedJob job = client.dequeue(q, 1, null).get(0);
    assertEquals(
        new Email("linus@example.com", List.of()), JsonCodec.decode(job.body(), Email.class));
  }

  @Test
  void aBodyOfAnotherShapeNamesTheType() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JsonCodec.decode("not json".getBytes(StandardCharsets.UTF_8), Email.class));
    assertTrue(e.getMessage().startsWith("body is not JSON of a Email: "), e.getMessage());
  }

  @Test
  void withoutJacksonItSaysWhichDependencyToAdd() throws Exception {
    // The SDK's classes alone, over the JDK: what an application without Jackson has.
    URL sdkClasses = Path.of("target/classes").toUri().toURL();
    try (URLClassLoader noJackson =
        new URLClassLoader(new URL[] {sdkClasses}, ClassLoader.getPlatformClassLoader())) {
      Class<?> codec = Class.forName("dev.runlater.JsonCodec", true, noJackson);
      Method encode = codec.getMethod("encode", Object.class);
      InvocationTargetException e =
          assertThrows(InvocationTargetException.class, () -> encode.invoke(null, "x"));
      assertEquals(IllegalStateException.class, e.getCause().getClass());
      assertEquals(
          "JSON bodies need Jackson, which is not on the classpath: add the dependency"
              + " com.fasterxml.jackson.core:jackson-databind to your project",
          e.getCause().getMessage());
    }
  }
}
