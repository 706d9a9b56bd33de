package dev.runlater;

import io.grpc.CallCredentials;
import io.grpc.CompositeCallCredentials;
import io.grpc.Metadata;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * An API token sent on every call as {@code authorization: Bearer <token>} (docs/security.md). As
 * call credentials rather than an interceptor, so it applies to every stub of the channel, streams
 * included, and composes with credentials the caller adds.
 *
 * <p>The token is a secret: it is never put in a message or {@code toString}.
 */
final class BearerToken extends CallCredentials {
  /** The environment variable every SDK and the CLI read the token from. */
  static final String ENV = "RUNLATER_TOKEN";

  private static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final Metadata headers = new Metadata();

  private BearerToken(String token) {
    headers.put(AUTHORIZATION, "Bearer " + token);
  }

  /**
   * The credentials for {@code token}. Checked here so a bad one fails at build time: a character
   * outside visible ASCII would otherwise be rejected deep in the transport, by a message that may
   * quote the header.
   */
  static BearerToken of(String token) {
    if (token.isEmpty() || !token.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
      throw new IllegalArgumentException(
          "token must be non-empty visible ASCII without spaces (as `runlater token create`"
              + " prints it)");
    }
    return new BearerToken(token);
  }

  /**
   * The call credentials of a client: {@code token}'s and the caller's own {@code custom} ones,
   * either or both (null: none). Without either, the token of {@value #ENV} in {@code env}
   * (trimmed; ignored when blank). With {@code custom} only, the environment is not read: they may
   * be the caller's own way to authenticate, and a token left there (for the CLI, say) must not be
   * sent along with them.
   */
  static CallCredentials withDefault(
      String token, CallCredentials custom, Map<String, String> env) {
    if (token == null && custom == null) {
      String value = env.get(ENV);
      token = value == null || value.isBlank() ? null : value.trim();
    }
    if (token == null) {
      return custom;
    }
    return custom == null ? of(token) : new CompositeCallCredentials(of(token), custom);
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
    Metadata copy = new Metadata();
    copy.merge(headers); // the applier takes ownership of what it is given
    applier.apply(copy);
  }

  @Override
  public String toString() {
    return "BearerToken[redacted]";
  }
}
