package dev.runlater.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.Await;
import dev.runlater.JobFilter;
import dev.runlater.JobSpec;
import dev.runlater.JobState;
import dev.runlater.QueueConfig;
import dev.runlater.RunlaterClient;
import dev.runlater.ServerTest;
import dev.runlater.TestServer;
import dev.runlater.v1.CheckpointRequest;
import dev.runlater.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.MethodDescriptor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * Claims of jobs that run together are renewed together: one Checkpoint per round for all of them,
 * as in the TypeScript and Python workers, not one call per job.
 */
class ClaimRenewalTest extends ServerTest {
  /** Records how many claims each Checkpoint call carries. */
  private static final class Checkpoints implements ClientInterceptor {
    final List<Integer> sizes = new CopyOnWriteArrayList<>();

    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      ClientCall<Q, R> call = next.newCall(method, options);
      if (!method
          .getFullMethodName()
          .equals(WorkerServiceGrpc.getCheckpointMethod().getFullMethodName())) {
        return call;
      }
      return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
        @Override
        public void sendMessage(Q message) {
          sizes.add(((CheckpointRequest) message).getCheckpointsCount());
          super.sendMessage(message);
        }
      };
    }
  }

  @Test
  void claimsOfJobsRunningTogetherAreRenewedInOneCallPerRound() throws Exception {
    String q =
        newQueue("renew", QueueConfig.builder().claimTimeout(Duration.ofMillis(400)).build());
    List<JobSpec> specs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      specs.add(JobSpec.of(q, "long-" + i));
    }
    client.enqueue(specs);
    Checkpoints checkpoints = new Checkpoints();
    CountDownLatch release = new CountDownLatch(1);
    try (RunlaterClient spy = TestServer.client(checkpoints);
        Worker w = Worker.builder(spy).concurrency(5).build()) {
      w.register(
          q,
          job -> {
            release.await();
            return JobResult.success();
          });
      w.start();
      // Two rounds of renewals at least (every 200 ms), each carrying the five claims.
      Await.until(
          Duration.ofSeconds(15), "two rounds of renewals", () -> checkpoints.sizes.size() >= 2);
      release.countDown();
      Await.until(
          Duration.ofSeconds(15),
          "the five jobs to succeed",
          () -> client.countJobs(JobFilter.queue(q).withState(JobState.SUCCEEDED)) == 5);
    }
    List<Integer> sizes = List.copyOf(checkpoints.sizes);
    assertTrue(sizes.size() >= 2, "renewal calls: " + sizes);
    for (int n : sizes) {
      assertEquals(5, n, "every renewal call carries the five claims: " + sizes);
    }
  }
}
