package dev.runlater;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;

/** How a client's target becomes a channel: TLS or plaintext, by the target's scheme. */
final class Channels {
  private Channels() {}

  /**
   * The channel builder for {@code target}: TLS for {@code https://}, plaintext HTTP/2 (h2c) for
   * {@code http://} and a bare {@code host:port}. The TLS files are the builder's options, each
   * unset one read from {@code env}, and only for {@code https://}: a plaintext client keeps
   * working wherever the TLS variables are set for others.
   */
  static ManagedChannelBuilder<?> forTarget(
      String target, Path tlsCa, Path tlsCert, Path tlsKey, Map<String, String> env) {
    URI uri = target.contains("://") ? URI.create(target) : null;
    String scheme = uri == null ? "" : uri.getScheme();
    if ("https".equals(scheme)) {
      ChannelCredentials tls = TlsConfig.resolve(tlsCa, tlsCert, tlsKey, env).credentials();
      return Grpc.newChannelBuilderForAddress(uri.getHost(), port(uri, 443), tls);
    }
    if (tlsCa != null || tlsCert != null) {
      // Refused rather than ignored: the caller expects the server to be verified.
      throw new IllegalArgumentException(
          "tlsCa and tlsClientCert need an https:// target, not " + target);
    }
    ChannelCredentials plaintext = InsecureChannelCredentials.create();
    if (uri == null) {
      return Grpc.newChannelBuilder(target, plaintext);
    }
    if (!"http".equals(scheme)) {
      throw new IllegalArgumentException(
          "unsupported scheme in " + target + ": use http:// (h2c) or https:// (TLS)");
    }
    return Grpc.newChannelBuilderForAddress(uri.getHost(), port(uri, 80), plaintext);
  }

  private static int port(URI uri, int byDefault) {
    return uri.getPort() == -1 ? byDefault : uri.getPort();
  }
}
