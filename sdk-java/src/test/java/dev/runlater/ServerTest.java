package dev.runlater;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** Base of the test classes that talk to the real test server: one client per class. */
public abstract class ServerTest {
  protected static RunlaterClient client;

  @BeforeAll
  static void connect() {
    client = TestServer.client();
  }

  @AfterAll
  static void disconnect() {
    client.close();
  }

  /** A fresh queue, named after `prefix` with a random suffix, so tests never share one. */
  protected static String newQueue(String prefix, QueueConfig config) {
    String name = TestServer.queueName(prefix);
    client.createQueue(name, config);
    return name;
  }
}
