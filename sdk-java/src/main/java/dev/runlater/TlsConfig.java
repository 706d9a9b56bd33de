package dev.runlater;

import io.grpc.ChannelCredentials;
import io.grpc.TlsChannelCredentials;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Map;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.TrustManagerFactory;

/**
 * The TLS files of an {@code https://} client: the CA to trust (null: the JDK's trust store) and a
 * client certificate with its key for mTLS (both null: none).
 */
record TlsConfig(Path ca, Path cert, Path key) {
  /** The environment variables every SDK and the CLI read the files from. */
  static final String CA_ENV = "RUNLATER_TLS_CA";

  static final String CERT_ENV = "RUNLATER_TLS_CERT";
  static final String KEY_ENV = "RUNLATER_TLS_KEY";

  // An in-memory key store needs a password; nothing is ever written with it.
  private static final char[] IN_MEMORY = "runlater".toCharArray();

  /**
   * The options given to the builder, each unset one taken from {@code env}. The certificate and
   * its key come as a pair, from the builder or else from the environment.
   */
  static TlsConfig resolve(Path ca, Path cert, Path key, Map<String, String> env) {
    if (ca == null) {
      ca = path(env, CA_ENV);
    }
    if (cert == null) {
      cert = path(env, CERT_ENV);
      key = path(env, KEY_ENV);
      if ((cert == null) != (key == null)) {
        throw new IllegalArgumentException(
            (cert == null
                    ? KEY_ENV + " is set but " + CERT_ENV
                    : CERT_ENV + " is set but " + KEY_ENV)
                + " is not: a client certificate needs both");
      }
    }
    return new TlsConfig(ca, cert, key);
  }

  /**
   * Reads the files into channel credentials; a missing or unparsable file throws {@link
   * IllegalArgumentException} naming it.
   */
  ChannelCredentials credentials() {
    TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
    try {
      if (ca != null) {
        KeyStore trusted = emptyKeyStore();
        List<X509Certificate> cas = Pem.certificates(ca);
        for (int i = 0; i < cas.size(); i++) {
          trusted.setCertificateEntry("ca-" + i, cas.get(i));
        }
        TrustManagerFactory tmf =
            TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(trusted);
        tls.trustManager(tmf.getTrustManagers());
      }
      if (cert != null) {
        List<X509Certificate> chain = Pem.certificates(cert);
        PrivateKey privateKey = Pem.privateKey(key, chain.get(0));
        KeyStore own = emptyKeyStore();
        own.setKeyEntry("client", privateKey, IN_MEMORY, chain.toArray(new Certificate[0]));
        KeyManagerFactory kmf =
            KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(own, IN_MEMORY);
        tls.keyManager(kmf.getKeyManagers());
      }
    } catch (GeneralSecurityException | IOException e) {
      // The files were read and parsed already; this is the JDK refusing what they hold.
      throw new IllegalArgumentException("cannot use the TLS files " + this + ": " + e, e);
    }
    return tls.build();
  }

  private static KeyStore emptyKeyStore() throws GeneralSecurityException, IOException {
    KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
    store.load(null, null);
    return store;
  }

  private static Path path(Map<String, String> env, String name) {
    String value = env.get(name);
    return value == null || value.isBlank() ? null : Path.of(value.trim());
  }
}
