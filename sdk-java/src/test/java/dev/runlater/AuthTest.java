package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.v1.CreateTokenRequest;
import dev.runlater.v1.TokenServiceGrpc;
import dev.runlater.worker.DequeueMode;
import dev.runlater.worker.JobResult;
import dev.runlater.worker.Worker;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A server running with {@code --auth}: the token a client sends (from {@code token(...)}, {@code
 * RUNLATER_TOKEN}, call credentials or an interceptor of the caller's), on every kind of call, and
 * what a client is told when its token is missing or lacks a scope.
 */
class AuthTest {
  private static final Duration WAIT = Duration.ofSeconds(15);
  private static TestServer.Started server;
  private static String admin;
  private static ManagedChannel tokenChannel;
  private static TokenServiceGrpc.TokenServiceBlockingStub tokens;
  private static RunlaterClient adminClient;

  @BeforeAll
  static void start() {
    admin = tokenOfTheServersForm();
    server = TestServer.start("auth", List.of("--auth"), Map.of("RUNLATER_ADMIN_TOKEN", admin));
    tokenChannel =
        Grpc.newChannelBuilder(server.address(), InsecureChannelCredentials.create()).build();
    tokens =
        TokenServiceGrpc.newBlockingStub(tokenChannel).withCallCredentials(BearerToken.of(admin));
    adminClient = client(b -> b.token(admin));
  }

  @AfterAll
  static void stop() {
    adminClient.close();
    tokenChannel.shutdownNow();
    server.close();
  }

  /** A token as the server makes them (rl_<12>_<43>), e.g. a bootstrap admin token. */
  private static String tokenOfTheServersForm() {
    SecureRandom random = new SecureRandom();
    byte[] id = new byte[6];
    byte[] secret = new byte[32];
    random.nextBytes(id);
    random.nextBytes(secret);
    return "rl_"
        + HexFormat.of().formatHex(id)
        + "_"
        + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
  }

  /** A new token with one scope, made with the admin token over TokenService. */
  private static String token(String scope) {
    CreateTokenRequest req =
        CreateTokenRequest.newBuilder().setName("java-" + scope).addScopes(scope).build();
    return tokens.createToken(req).getSecretToken();
  }

  /**
   * A client of the auth server that reads an empty environment, so each test says where its token
   * comes from (and a RUNLATER_TOKEN in the shell running the tests changes nothing).
   */
  private static RunlaterClient client(UnaryOperator<RunlaterClient.Builder> options) {
    return options
        .apply(
            RunlaterClient.builder(server.address())
                .defaultDeadline(Duration.ofSeconds(10))
                .env(Map.of()))
        .build();
  }

  private static String newQueue() {
    String q = TestServer.queueName("auth");
    adminClient.createQueue(q, QueueConfig.defaults());
    return q;
  }

  private static JobState stateOf(String jobId) {
    return adminClient.getJob(jobId, false).orElseThrow().state();
  }

  /** Puts its own {@code authorization} header on every call, and records each call's method. */
  private record OwnBearer(String token, Set<String> methods) implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      methods.add(method.getBareMethodName());
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          headers.put(
              Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER),
              "Bearer " + token);
          super.start(listener, headers);
        }
      };
    }
  }

  @Test
  void aCallWithoutTokenIsUnauthenticatedAndToldWhatToSend() {
    String q = newQueue();
    try (RunlaterClient anonymous = client(b -> b)) {
      RunlaterException e =
          assertThrows(RunlaterException.class, () -> anonymous.enqueue(JobSpec.of(q, "x")));
      assertEquals(Status.Code.UNAUTHENTICATED, e.code());
      assertEquals(ErrorReason.UNAUTHENTICATED, e.reason());
      assertTrue(e.getMessage().contains("RUNLATER_TOKEN"), e.getMessage());
    }
  }

  @Test
  void anUnknownTokenIsUnauthenticatedAndNeverQuoted() {
    String unknown = tokenOfTheServersForm();
    try (RunlaterClient c = client(b -> b.token(unknown))) {
      RunlaterException e = assertThrows(RunlaterException.class, c::listQueues);
      assertEquals(ErrorReason.UNAUTHENTICATED, e.reason());
      for (Throwable t = e; t != null; t = t.getCause()) {
        assertFalse(String.valueOf(t.getMessage()).contains(unknown), t.toString());
      }
    }
  }

  @Test
  void aTokenWithoutTheScopeIsDeniedNamingTheScope() {
    String q = newQueue();
    try (RunlaterClient producer = client(b -> b.token(token("enqueue")))) {
      producer.enqueue(JobSpec.of(q, "x"));
      RunlaterException e =
          assertThrows(RunlaterException.class, () -> producer.dequeue(q, 1, Duration.ZERO));
      assertEquals(Status.Code.PERMISSION_DENIED, e.code());
      assertEquals(ErrorReason.PERMISSION_DENIED, e.reason());
      assertTrue(e.getMessage().contains("needs the work scope"), e.getMessage());
    }
  }

  @Test
  void scopedTokensEnqueueDequeueAndAck() {
    String q = newQueue();
    try (RunlaterClient producer = client(b -> b.token(token("enqueue")));
        RunlaterClient worker = client(b -> b.token(token("work")))) {
      String id = producer.enqueue(JobSpec.of(q, "x"));
      String viaAsync = producer.async().enqueue(JobSpec.of(q, "y")).join();
      List<DequeuedJob> jobs = worker.dequeue(q, 2, Duration.ofSeconds(5));
      assertEquals(Set.of(id, viaAsync), Set.of(jobs.get(0).jobId(), jobs.get(1).jobId()));
      worker.ack(q, jobs.stream().map(Ack::success).toList());
      assertEquals(JobState.SUCCEEDED, stateOf(id));
      assertEquals(JobState.SUCCEEDED, stateOf(viaAsync));
    }
  }

  @Test
  void theWorkerStreamsAndAcksWithItsClientsToken() {
    String q = newQueue();
    String id = adminClient.enqueue(JobSpec.of(q, "x"));
    try (RunlaterClient c = client(b -> b.token(token("work")));
        Worker worker = Worker.builder(c).dequeueMode(DequeueMode.STREAM).build()) {
      worker.register(q, job -> JobResult.success()).start();
      Await.until(WAIT, "the job to succeed", () -> stateOf(id) == JobState.SUCCEEDED);
    }
  }

  @Test
  void runlaterTokenIsTheDefault() {
    Map<String, String> env = Map.of(BearerToken.ENV, " " + admin + "\n");
    try (RunlaterClient fromEnv = client(b -> b.env(env))) {
      fromEnv.listQueues();
    }
    // The option wins over the variable.
    Map<String, String> wrong = Map.of(BearerToken.ENV, tokenOfTheServersForm());
    try (RunlaterClient explicit = client(b -> b.env(wrong).token(admin))) {
      explicit.listQueues();
    }
  }

  @Test
  void callCredentialsOfTheCallersOwnReplaceRunlaterToken() {
    // Were RUNLATER_TOKEN sent as well, the call would carry two tokens and be refused.
    Map<String, String> wrong = Map.of(BearerToken.ENV, tokenOfTheServersForm());
    try (RunlaterClient c = client(b -> b.env(wrong).callCredentials(BearerToken.of(admin)))) {
      c.listQueues();
    }
  }

  @Test
  void anInterceptorCanSupplyTheTokenForEveryCallStreamsIncluded() {
    String q = newQueue();
    String id = adminClient.enqueue(JobSpec.of(q, "x"));
    Set<String> methods = ConcurrentHashMap.newKeySet();
    try (RunlaterClient c = client(b -> b.intercept(new OwnBearer(token("work"), methods)));
        Worker worker = Worker.builder(c).dequeueMode(DequeueMode.STREAM).build()) {
      worker.register(q, job -> JobResult.success()).start();
      Await.until(WAIT, "the job to succeed", () -> stateOf(id) == JobState.SUCCEEDED);
    }
    assertTrue(methods.contains("DequeueStream"), methods.toString());
  }
}
