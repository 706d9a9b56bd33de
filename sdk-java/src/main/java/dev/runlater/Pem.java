package dev.runlater;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PEM files of the TLS options with the JDK alone, so that a missing or unparsable file
 * fails when the client is built, with an {@link IllegalArgumentException} naming the file, rather
 * than at the first call deep inside the transport.
 */
final class Pem {
  // Any body: legacy encrypted keys carry headers (Proc-Type, DEK-Info) and must still be
  // recognised, to be refused with the way to convert them.
  private static final Pattern PRIVATE_KEY =
      Pattern.compile(
          "-----BEGIN ([A-Z ]*)PRIVATE KEY-----(.*?)-----END \\1PRIVATE KEY-----", Pattern.DOTALL);

  private Pem() {}

  /** The certificates of a PEM file (one or more), in file order. */
  static List<X509Certificate> certificates(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      List<X509Certificate> certs =
          CertificateFactory.getInstance("X.509").generateCertificates(in).stream()
              .map(X509Certificate.class::cast)
              .toList();
      if (certs.isEmpty()) {
        throw unreadable(file, "no certificate in it", null);
      }
      return certs;
    } catch (IOException e) {
      throw unreadable(file, e);
    } catch (CertificateException e) {
      throw unreadable(file, "not a PEM certificate: " + e.getMessage(), e);
    }
  }

  /**
   * The unencrypted PKCS#8 private key ({@code BEGIN PRIVATE KEY}) of a PEM file, of the algorithm
   * of {@code certificate} (its public key says which: EC, RSA, Ed25519, ...).
   */
  static PrivateKey privateKey(Path file, X509Certificate certificate) {
    String text;
    try {
      text = Files.readString(file, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw unreadable(file, e);
    }
    Matcher m = PRIVATE_KEY.matcher(text);
    if (!m.find()) {
      throw unreadable(file, "no PEM private key in it", null);
    }
    if (!m.group(1).isEmpty()) {
      // "EC ", "RSA " (PKCS#1 / SEC 1) or "ENCRYPTED ": the JDK reads none of them.
      throw unreadable(
          file,
          "a \"BEGIN "
              + m.group(1)
              + "PRIVATE KEY\" block, and the SDK reads unencrypted PKCS#8 (\"BEGIN PRIVATE"
              + " KEY\"): convert it with `openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8`",
          null);
    }
    String algorithm = certificate.getPublicKey().getAlgorithm();
    try {
      byte[] der = Base64.getMimeDecoder().decode(m.group(2));
      return KeyFactory.getInstance(algorithm).generatePrivate(new PKCS8EncodedKeySpec(der));
    } catch (IllegalArgumentException | GeneralSecurityException e) {
      throw unreadable(
          file,
          "not a PKCS#8 " + algorithm + " key (the certificate's algorithm): " + e.getMessage(),
          e);
    }
  }

  private static IllegalArgumentException unreadable(Path file, IOException e) {
    String why =
        e instanceof NoSuchFileException
            ? "no such file"
            : e instanceof AccessDeniedException ? "permission denied" : e.toString();
    return unreadable(file, why, e);
  }

  private static IllegalArgumentException unreadable(Path file, String why, Throwable cause) {
    return new IllegalArgumentException("cannot use " + file + ": " + why, cause);
  }
}
