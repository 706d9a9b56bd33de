package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the client builder checks before anything connects: the token's form, and the TLS options
 * and files, from the builder or the environment. A mistake fails {@code build()} with a message
 * that names the file or variable at fault, and never quotes a token.
 */
class ClientOptionsTest {
  private static final String HTTPS = "https://127.0.0.1:1";

  /** A builder that reads {@code env} instead of the process environment. */
  private static RunlaterClient.Builder builder(String target, Map<String, String> env) {
    return RunlaterClient.builder(target).env(env);
  }

  /** Builds, expecting IllegalArgumentException, and returns its message. */
  private static String refused(RunlaterClient.Builder builder) {
    return assertThrows(IllegalArgumentException.class, builder::build).getMessage();
  }

  @Test
  void malformedTokenIsRefusedWithoutQuotingIt() {
    String secret = "rl_abcdefabcdef_s3cr3t with a space";
    String fromOption = refused(builder("127.0.0.1:1", Map.of()).token(secret));
    String fromEnv = refused(builder("127.0.0.1:1", Map.of(BearerToken.ENV, secret)));
    for (String message : new String[] {fromOption, fromEnv}) {
      assertTrue(message.contains("visible ASCII"), message);
      assertFalse(message.contains("s3cr3t"), message);
    }
  }

  @Test
  void tokenCredentialsNeverShowTheToken() {
    assertEquals("BearerToken[redacted]", BearerToken.of("rl_abcdefabcdef_s3cr3t").toString());
  }

  @Test
  void tlsOptionsNeedAnHttpsTarget() {
    Path ca = TestCerts.file("ca.pem");
    for (String target : new String[] {"127.0.0.1:1", "http://127.0.0.1:1"}) {
      String message = refused(builder(target, Map.of()).tlsCa(ca));
      assertTrue(message.contains("need an https:// target"), message);
    }
    String scheme = refused(builder("ftp://127.0.0.1:1", Map.of()));
    assertTrue(scheme.contains("use http:// (h2c) or https:// (TLS)"), scheme);
  }

  @Test
  void tlsEnvironmentIsReadForHttpsTargetsOnly() {
    Map<String, String> env = Map.of(TlsConfig.CA_ENV, "/nonexistent/ca.pem");
    assertDoesNotThrow(() -> builder("http://127.0.0.1:1", env).build().close());
    String message = refused(builder(HTTPS, env));
    assertTrue(message.contains("/nonexistent/ca.pem: no such file"), message);
    // The option wins over the variable.
    assertDoesNotThrow(() -> builder(HTTPS, env).tlsCa(TestCerts.file("ca.pem")).build().close());
  }

  @Test
  void clientCertificateFromTheEnvironmentNeedsBothVariables() {
    String message =
        refused(
            builder(HTTPS, Map.of(TlsConfig.CERT_ENV, TestCerts.file("client.pem").toString())));
    assertTrue(message.contains("RUNLATER_TLS_CERT is set but RUNLATER_TLS_KEY is not"), message);
    Map<String, String> both =
        Map.of(
            TlsConfig.CERT_ENV, TestCerts.file("client.pem").toString(),
            TlsConfig.KEY_ENV, TestCerts.file("client-key.pem").toString());
    assertDoesNotThrow(() -> builder(HTTPS, both).build().close());
  }

  @Test
  void unparsableFilesAreNamed(@TempDir Path tmp) throws IOException {
    Path garbage = Files.writeString(tmp.resolve("garbage.pem"), "not a certificate\n");
    Path cert = TestCerts.file("client.pem");

    String ca = refused(builder(HTTPS, Map.of()).tlsCa(garbage));
    assertTrue(ca.startsWith("cannot use " + garbage + ": "), ca);

    String leaf = refused(builder(HTTPS, Map.of()).tlsClientCert(garbage, cert));
    assertTrue(leaf.startsWith("cannot use " + garbage + ": "), leaf);

    String key = refused(builder(HTTPS, Map.of()).tlsClientCert(cert, garbage));
    assertEquals("cannot use " + garbage + ": no PEM private key in it", key);

    Path missing = tmp.resolve("missing-key.pem");
    String absent = refused(builder(HTTPS, Map.of()).tlsClientCert(cert, missing));
    assertEquals("cannot use " + missing + ": no such file", absent);
  }

  @Test
  void keysOtherThanPkcs8AreRefusedWithTheFix(@TempDir Path tmp) throws Exception {
    Path sec1 = tmp.resolve("client-key-sec1.pem");
    Process p =
        new ProcessBuilder(
                "openssl",
                "ec",
                "-in",
                TestCerts.file("client-key.pem").toString(),
                "-out",
                sec1.toString())
            .redirectErrorStream(true)
            .start();
    assertEquals(0, p.waitFor());
    String message =
        refused(builder(HTTPS, Map.of()).tlsClientCert(TestCerts.file("client.pem"), sec1));
    assertTrue(
        message.startsWith("cannot use " + sec1 + ": a \"BEGIN EC PRIVATE KEY\" block"), message);
    assertTrue(message.contains("openssl pkcs8 -topk8 -nocrypt"), message);
  }
}
