package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.CallCredentials;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The client builder's public hooks: interceptors and call credentials. */
class ClientHooksTest extends ServerTest {
  private static final Metadata.Key<String> TENANT =
      Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);

  /** Records "name method" for each call and sets a header, as a tracing interceptor would. */
  private record Recorder(String name, List<String> seen) implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      seen.add(name + " " + method.getBareMethodName());
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
        @Override
        public void start(Listener<R> listener, Metadata headers) {
          headers.put(TENANT, "acme");
          super.start(listener, headers);
        }
      };
    }
  }

  @Test
  void interceptorsSeeEveryCallFirstAddedFirst() {
    String q = newQueue("hooks", QueueConfig.defaults());
    List<String> seen = new CopyOnWriteArrayList<>();
    try (RunlaterClient c =
        RunlaterClient.builder(TestServer.target())
            .intercept(new Recorder("outer", seen))
            .intercept(new Recorder("inner", seen))
            .build()) {
      String id = c.enqueue(JobSpec.of(q, "x"));
      assertTrue(c.getJob(id, false).isPresent());
      c.async().getJob(id, false).join();
    }
    assertEquals(
        List.of(
            "outer Enqueue", "inner Enqueue",
            "outer GetJobs", "inner GetJobs",
            "outer GetJobs", "inner GetJobs"),
        seen);
  }

  @Test
  void callCredentialsApplyToEveryCall() {
    AtomicInteger applied = new AtomicInteger();
    CallCredentials token =
        new CallCredentials() {
          @Override
          public void applyRequestMetadata(
              RequestInfo info, Executor executor, MetadataApplier applier) {
            applied.incrementAndGet();
            Metadata headers = new Metadata();
            headers.put(
                Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer t0k");
            applier.apply(headers);
          }
        };
    try (RunlaterClient c =
        RunlaterClient.builder(TestServer.target()).callCredentials(token).build()) {
      String q = TestServer.queueName("creds");
      c.createQueue(q, QueueConfig.defaults());
      c.enqueue(JobSpec.of(q, "x"));
      c.async().enqueue(JobSpec.of(q, "y")).join();
    }
    assertEquals(3, applied.get());
  }
}
