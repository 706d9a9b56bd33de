package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.worker.DequeueMode;
import dev.runlater.worker.JobResult;
import dev.runlater.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code https://} targets: a server with {@code --tls-cert}/{@code --tls-key}, and one that also
 * requires client certificates ({@code --tls-client-ca}), with the certificates of {@link
 * TestCerts}. A server the client does not trust, or one that refuses it, fails the call at once
 * with an {@link UnavailableException} saying what TLS reported (with the 10 s deadline here, a
 * hang would come back as DEADLINE_EXCEEDED instead).
 */
class TlsTest {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static TestServer.Started tls;
  private static TestServer.Started mtls;

  @BeforeAll
  static void start() {
    List<String> serverCert =
        List.of(
            "--tls-cert",
            TestCerts.file("server.pem").toString(),
            "--tls-key",
            TestCerts.file("server-key.pem").toString());
    tls = TestServer.start("tls", serverCert, Map.of());
    List<String> requireClientCert = new ArrayList<>(serverCert);
    requireClientCert.addAll(List.of("--tls-client-ca", TestCerts.file("ca.pem").toString()));
    mtls = TestServer.start("mtls", requireClientCert, Map.of());
  }

  @AfterAll
  static void stop() {
    tls.close();
    mtls.close();
  }

  /** A client of {@code server} over TLS that reads an empty environment unless told otherwise. */
  private static RunlaterClient client(
      TestServer.Started server, UnaryOperator<RunlaterClient.Builder> options) {
    return options
        .apply(
            RunlaterClient.builder("https://" + server.address())
                .defaultDeadline(Duration.ofSeconds(10))
                .env(Map.of()))
        .build();
  }

  private static RunlaterClient.Builder trustingTheCa(RunlaterClient.Builder b) {
    return b.tlsCa(TestCerts.file("ca.pem"));
  }

  private static RunlaterClient.Builder withClientCert(RunlaterClient.Builder b) {
    return trustingTheCa(b)
        .tlsClientCert(TestCerts.file("client.pem"), TestCerts.file("client-key.pem"));
  }

  /** Enqueues a job and looks it up, blocking and async: the client works end to end. */
  private static void roundTrip(RunlaterClient c) {
    String q = TestServer.queueName("tls");
    c.createQueue(q, QueueConfig.defaults());
    String id = c.enqueue(JobSpec.of(q, "over TLS"));
    assertEquals("over TLS", c.getJob(id, true).orElseThrow().bodyUtf8());
    assertTrue(c.async().getJob(id, false).join().isPresent());
  }

  private static UnavailableException unavailable(RunlaterClient c) {
    return assertThrows(UnavailableException.class, c::listQueues);
  }

  @Test
  void theClientTrustsTheServerThroughTheCa() {
    try (RunlaterClient c = client(tls, TlsTest::trustingTheCa)) {
      roundTrip(c);
    }
  }

  @Test
  void theWorkerStreamsOverTls() {
    try (RunlaterClient c = client(tls, TlsTest::trustingTheCa);
        Worker worker = Worker.builder(c).dequeueMode(DequeueMode.STREAM).build()) {
      String q = TestServer.queueName("tls");
      c.createQueue(q, QueueConfig.defaults());
      String id = c.enqueue(JobSpec.of(q, "x"));
      worker.register(q, job -> JobResult.success()).start();
      Await.until(
          WAIT,
          "the job to succeed",
          () -> c.getJob(id, false).orElseThrow().state() == JobState.SUCCEEDED);
    }
  }

  @Test
  void aServerSignedByAnUnknownCaFailsAtOnceSayingSo() {
    // No tlsCa: the JDK's trust store, which does not know the test CA.
    try (RunlaterClient c = client(tls, b -> b)) {
      UnavailableException e = unavailable(c);
      assertTrue(
          e.getMessage()
              .startsWith(
                  "UNAVAILABLE: runlater server https://" + tls.address() + " unavailable: "),
          e.getMessage());
      assertTrue(e.getMessage().contains("TLS handshake failed: "), e.getMessage());
      assertTrue(e.getMessage().contains("certification path"), e.getMessage());
    }
  }

  @Test
  void httpsToAPlaintextServerSaysItIsNotTls() {
    try (RunlaterClient c =
        RunlaterClient.builder("https://" + TestServer.target()).env(Map.of()).build()) {
      assertTrue(
          unavailable(c).getMessage().contains("the server did not answer in TLS"),
          "https:// to an h2c server");
    }
  }

  @Test
  void mutualTlsWorksWithTheClientCertificate() {
    try (RunlaterClient c = client(mtls, TlsTest::withClientCert)) {
      roundTrip(c);
    }
  }

  @Test
  void mutualTlsRefusesAClientWithoutCertificateSayingSo() {
    try (RunlaterClient c = client(mtls, TlsTest::trustingTheCa)) {
      UnavailableException e = unavailable(c);
      assertTrue(e.getMessage().contains("TLS handshake failed: "), e.getMessage());
      assertTrue(e.getMessage().contains("CERTIFICATE_REQUIRED"), e.getMessage());
    }
  }

  @Test
  void theTlsFilesDefaultToTheEnvironment() {
    Map<String, String> env =
        Map.of(
            TlsConfig.CA_ENV, TestCerts.file("ca.pem").toString(),
            TlsConfig.CERT_ENV, TestCerts.file("client.pem").toString(),
            TlsConfig.KEY_ENV, TestCerts.file("client-key.pem").toString());
    try (RunlaterClient c = client(mtls, b -> b.env(env))) {
      roundTrip(c);
    }
  }
}
