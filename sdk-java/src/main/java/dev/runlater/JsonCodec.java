package dev.runlater;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Objects;

/**
 * JSON job bodies, with Jackson. Jackson is an optional dependency of the SDK: add {@code
 * com.fasterxml.jackson.core:jackson-databind} (2.12 or later) to your application to use this
 * class; everything else in the SDK works without it, and without it every method here throws an
 * {@link IllegalStateException} that says so. Records, beans and maps work; Jackson modules on the
 * classpath (java.time, for example) are registered.
 *
 * <pre>{@code
 * record Email(String to) {}
 * client.enqueue(JobSpec.of("emails", JsonCodec.encode(new Email("ada@example.com"))));
 * // in the handler:
 * Email email = JsonCodec.decode(job.body(), Email.class);
 * }</pre>
 */
public final class JsonCodec {
  private static final String JACKSON = "com.fasterxml.jackson.databind.ObjectMapper";

  private JsonCodec() {}

  /**
   * {@code value} as UTF-8 JSON.
   *
   * @throws IllegalArgumentException if Jackson cannot write it
   * @throws IllegalStateException if Jackson is not on the classpath
   */
  public static byte[] encode(Object value) {
    ObjectMapper mapper = mapper();
    try {
      return mapper.writeValueAsBytes(value);
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot write value as JSON: " + e.getMessage(), e);
    }
  }

  /**
   * The JSON {@code body} read as a {@code type}.
   *
   * @throws IllegalArgumentException if the body is not JSON of that shape (the message says where)
   * @throws IllegalStateException if Jackson is not on the classpath
   */
  public static <T> T decode(byte[] body, Class<T> type) {
    Objects.requireNonNull(body, "body");
    Objects.requireNonNull(type, "type");
    ObjectMapper mapper = mapper();
    try {
      return mapper.readValue(body, type);
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "body is not JSON of a " + type.getSimpleName() + ": " + e.getMessage(), e);
    }
  }

  private static ObjectMapper mapper() {
    if (!JACKSON_PRESENT) {
      throw new IllegalStateException(
          "JSON bodies need Jackson, which is not on the classpath: add the dependency"
              + " com.fasterxml.jackson.core:jackson-databind to your project");
    }
    return Mapper.INSTANCE;
  }

  private static final boolean JACKSON_PRESENT = present(JACKSON);

  private static boolean present(String className) {
    try {
      Class.forName(className, false, JsonCodec.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** Holds the mapper in a class of its own, so Jackson is loaded only when it is there. */
  private static final class Mapper {
    static final ObjectMapper INSTANCE = new ObjectMapper().findAndRegisterModules();
  }
}
