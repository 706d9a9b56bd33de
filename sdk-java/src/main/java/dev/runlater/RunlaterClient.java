package dev.runlater;

import com.google.protobuf.FieldMask;
import dev.runlater.v1.AckRequest;
import dev.runlater.v1.CheckpointRequest;
import dev.runlater.v1.CreateQueueRequest;
import dev.runlater.v1.CreateQueueResponse;
import dev.runlater.v1.DeleteJobsRequest;
import dev.runlater.v1.DeleteQueueRequest;
import dev.runlater.v1.DequeueRequest;
import dev.runlater.v1.EnqueueRequest;
import dev.runlater.v1.GetJobsRequest;
import dev.runlater.v1.GetQueueRequest;
import dev.runlater.v1.JobServiceGrpc;
import dev.runlater.v1.ListQueuesRequest;
import dev.runlater.v1.QueueServiceGrpc;
import dev.runlater.v1.UpdateQueueRequest;
import dev.runlater.v1.WorkerServiceGrpc;
import io.grpc.CallCredentials;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.StatusRuntimeException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A client for one runlater server: jobs (enqueue, look up, scan, count, retry, delete), queue
 * administration, and the worker calls (dequeue, ack, checkpoint). It speaks gRPC over HTTP/2: TLS
 * for an {@code https://} target, plaintext (h2c) otherwise. Thread-safe; make one per process and
 * {@link #close()} it at shutdown.
 *
 * <pre>{@code
 * try (RunlaterClient client = RunlaterClient.builder("127.0.0.1:8080").build()) {
 *   client.createQueue("emails", QueueConfig.defaults());
 *   String id = client.enqueue(JobSpec.of("emails", "hello"));
 * }
 * }</pre>
 *
 * <p>Every failed call throws {@link RunlaterException} (or the subclass of its family). {@link
 * #async()} offers the main calls as {@link java.util.concurrent.CompletableFuture}s.
 */
public final class RunlaterClient implements AutoCloseable {
  private final ManagedChannel channel;
  private final String target;
  private final Duration defaultDeadline;
  private final JobServiceGrpc.JobServiceBlockingStub jobs;
  private final QueueServiceGrpc.QueueServiceBlockingStub queues;
  private final WorkerServiceGrpc.WorkerServiceBlockingStub workers;
  private final WorkerServiceGrpc.WorkerServiceStub streams;
  private final AsyncRunlaterClient async;

  private RunlaterClient(
      ManagedChannel channel, String target, Duration defaultDeadline, CallCredentials creds) {
    this.channel = channel;
    this.target = target;
    this.defaultDeadline = defaultDeadline;
    // withCallCredentials(null) leaves a stub without credentials.
    this.jobs = JobServiceGrpc.newBlockingStub(channel).withCallCredentials(creds);
    this.queues = QueueServiceGrpc.newBlockingStub(channel).withCallCredentials(creds);
    this.workers = WorkerServiceGrpc.newBlockingStub(channel).withCallCredentials(creds);
    this.streams = WorkerServiceGrpc.newStub(channel).withCallCredentials(creds);
    this.async =
        new AsyncRunlaterClient(
            JobServiceGrpc.newStub(channel).withCallCredentials(creds),
            streams,
            target,
            defaultDeadline);
  }

  /**
   * Starts a builder for a server at {@code target}: {@code "host:port"} or {@code
   * "http://host:port"} (plaintext), or {@code "https://host:port"} (TLS).
   */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /** Largest message accepted from the server: a 16 MiB body (the most a queue allows) and more. */
  static final int MAX_INBOUND_BYTES = 64 * 1024 * 1024;

  /** Configures a {@link RunlaterClient}. */
  public static final class Builder {
    private final String target;
    private Duration defaultDeadline = Duration.ofSeconds(30);
    private final List<ClientInterceptor> interceptors = new ArrayList<>();
    private CallCredentials callCredentials;
    private String token;
    private Path tlsCa;
    private Path tlsCert;
    private Path tlsKey;
    private Map<String, String> env = System.getenv();

    private Builder(String target) {
      this.target = Objects.requireNonNull(target, "target");
    }

    /** Deadline of each call (a long-polling dequeue gets its wait on top); default 30 s. */
    public Builder defaultDeadline(Duration deadline) {
      this.defaultDeadline = Objects.requireNonNull(deadline, "deadline");
      return this;
    }

    /**
     * Sends {@code token} on every call, the worker's streams included, as {@code authorization:
     * Bearer <token>}: what a server running with auth needs (docs/security.md). Default: the
     * {@code RUNLATER_TOKEN} environment variable, unless {@link #callCredentials} are given.
     */
    public Builder token(String token) {
      this.token = Objects.requireNonNull(token, "token");
      return this;
    }

    /**
     * Runs {@code interceptor} around every call, the worker's included (headers, tracing, metrics,
     * ...). Of several, the first one added sees each call first.
     */
    public Builder intercept(ClientInterceptor interceptor) {
      interceptors.add(Objects.requireNonNull(interceptor, "interceptor"));
      return this;
    }

    /**
     * Attaches {@code credentials} to every call (for example a token from your own secret store).
     * With them, {@code RUNLATER_TOKEN} is not read; a {@link #token} given too is sent as well.
     * Over {@code http://}, credentials that insist on a secure transport refuse to apply and their
     * calls fail with UNAUTHENTICATED.
     */
    public Builder callCredentials(CallCredentials credentials) {
      this.callCredentials = Objects.requireNonNull(credentials, "credentials");
      return this;
    }

    /**
     * For an {@code https://} target: trusts the CA certificates of the PEM file {@code caFile}
     * instead of the JDK's trust store. Default: the {@code RUNLATER_TLS_CA} environment variable.
     */
    public Builder tlsCa(Path caFile) {
      this.tlsCa = Objects.requireNonNull(caFile, "caFile");
      return this;
    }

    /**
     * For an {@code https://} target: presents this client certificate (PEM, leaf first) and its
     * unencrypted PKCS#8 private key (PEM), for a server that requires client certificates (mTLS).
     * Default: the {@code RUNLATER_TLS_CERT} and {@code RUNLATER_TLS_KEY} environment variables.
     */
    public Builder tlsClientCert(Path certFile, Path keyFile) {
      this.tlsCert = Objects.requireNonNull(certFile, "certFile");
      this.tlsKey = Objects.requireNonNull(keyFile, "keyFile");
      return this;
    }

    /** The environment the defaults are read from; tests give their own. */
    Builder env(Map<String, String> env) {
      this.env = Map.copyOf(env);
      return this;
    }

    /**
     * Opens the channel (lazily: nothing connects until the first call).
     *
     * @throws IllegalArgumentException for an unsupported target, TLS options with a target that is
     *     not {@code https://}, a TLS file that is missing or cannot be parsed (named in the
     *     message), or a malformed token
     */
    public RunlaterClient build() {
      // Every check before the channel is built, so a refused build leaves no channel behind.
      CallCredentials credentials = BearerToken.withDefault(token, callCredentials, env);
      ManagedChannelBuilder<?> channel = Channels.forTarget(target, tlsCa, tlsCert, tlsKey, env);
      // gRPC's default of 4 MiB per message would refuse a single job with a big body (queues
      // allow up to 16 MiB) and poison the connection for the calls after it; the server keeps
      // a Dequeue answer's bodies under 3 MiB unless one job alone is larger.
      // The channel runs the interceptor added last first; reversed, the first one added sees
      // each call first, as documented above.
      List<ClientInterceptor> firstAddedFirst = new ArrayList<>(interceptors);
      Collections.reverse(firstAddedFirst);
      return new RunlaterClient(
          channel.maxInboundMessageSize(MAX_INBOUND_BYTES).intercept(firstAddedFirst).build(),
          target,
          defaultDeadline,
          credentials);
    }
  }

  // ---------------------------------------------------------------- jobs

  /** Enqueues one job and returns its id. */
  public String enqueue(JobSpec spec) {
    return enqueue(List.of(spec)).get(0);
  }

  /**
   * Enqueues 1 to 1,000 jobs (possibly for several queues) and returns their ids in request order.
   * The batch is validated as a whole: one bad job rejects it and nothing is written.
   */
  public List<String> enqueue(List<JobSpec> specs) {
    EnqueueRequest req = ProtoConvert.enqueueRequest(specs);
    return call(() -> jobs().enqueue(req).getJobIdsList());
  }

  /** Looks one job up; empty if no such job exists (any more). */
  public Optional<Job> getJob(String jobId, boolean includeBody) {
    List<Job> found = getJobs(List.of(jobId), includeBody);
    return found.isEmpty() ? Optional.empty() : Optional.of(found.get(0));
  }

  /** Looks up to 1,000 jobs up; returns those found, in request order. */
  public List<Job> getJobs(List<String> jobIds, boolean includeBody) {
    GetJobsRequest req = ProtoConvert.getJobsRequest(jobIds, includeBody);
    return call(() -> ProtoConvert.jobs(jobs().getJobs(req)));
  }

  /**
   * The first page of a queue's jobs matching {@code filter} (newest run_after first), no bodies.
   */
  public JobPage scanJobs(JobFilter filter) {
    return scanJobs(filter, ScanOptions.defaults());
  }

  /**
   * One page of a queue's jobs matching {@code filter}, newest run_after first: the page {@code
   * options.pageToken()} names (the first when empty), of {@code options.pageSize()} jobs, with
   * bodies when {@code options.includeBody()}. {@link #scanAllJobs} follows the pages for you.
   */
  public JobPage scanJobs(JobFilter filter, ScanOptions options) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(options, "options");
    return call(() -> JobQueries.page(jobs().scanJobs(JobQueries.scan(filter, options))));
  }

  /** Every job matching {@code filter}, fetched a page (the server's default size) at a time. */
  public JobScan scanAllJobs(JobFilter filter) {
    return scanAllJobs(filter, ScanOptions.defaults());
  }

  /**
   * Every job matching {@code filter}, from the page {@code options} starts at, fetched lazily a
   * page of {@code options.pageSize()} at a time: iterate it, or {@link JobScan#stream()} it.
   */
  public JobScan scanAllJobs(JobFilter filter, ScanOptions options) {
    Objects.requireNonNull(filter, "filter");
    Objects.requireNonNull(options, "options");
    return new JobScan(options, page -> scanJobs(filter, page));
  }

  /** Counts a queue's jobs matching {@code filter}. */
  public long countJobs(JobFilter filter) {
    Objects.requireNonNull(filter, "filter");
    return call(() -> jobs().countJobs(JobQueries.count(filter)).getCount());
  }

  /**
   * Moves up to 1,000 FAILED jobs of {@code queue} back to PENDING, due now, with fresh attempts.
   */
  public long retryFailedJobs(String queue) {
    return retryFailedJobs(queue, RetryFailedOptions.builder().build());
  }

  /**
   * Moves the FAILED jobs of {@code queue} that {@code options} select back to PENDING, with the
   * attempts and the due time it gives.
   *
   * @return how many jobs moved
   */
  public long retryFailedJobs(String queue, RetryFailedOptions options) {
    Objects.requireNonNull(queue, "queue");
    Objects.requireNonNull(options, "options");
    return call(() -> jobs().retryFailedJobs(JobQueries.retryFailed(queue, options)).getCount());
  }

  /**
   * Deletes up to 1,000 jobs matching {@code filter}, which must name a state (so no call wipes a
   * queue by accident) and cannot filter on {@code future}.
   *
   * @return how many jobs were deleted
   * @throws IllegalArgumentException for a filter without a state, or with {@code future}
   */
  public long deleteJobs(JobFilter filter) {
    return deleteJobs(filter, 0);
  }

  /**
   * Deletes at most {@code limit} jobs matching {@code filter} (see {@link
   * #deleteJobs(JobFilter)}).
   *
   * @param limit at most this many; 0: the server's default (1,000)
   * @return how many jobs were deleted
   */
  public long deleteJobs(JobFilter filter, int limit) {
    Objects.requireNonNull(filter, "filter");
    DeleteJobsRequest req = JobQueries.delete(filter, limit);
    return call(() -> jobs().deleteJobs(req).getCount());
  }

  // -------------------------------------------------------------- queues

  /**
   * Creates a queue; null fields of {@code config} take the server's defaults. Idempotent: an
   * existing queue is returned unchanged with {@code created == false}.
   */
  public CreateQueueResult createQueue(String name, QueueConfig config) {
    CreateQueueRequest req =
        CreateQueueRequest.newBuilder()
            .setName(name)
            .setConfig(ProtoConvert.queueConfig(config, new ArrayList<>()))
            .build();
    CreateQueueResponse resp = call(() -> queues().createQueue(req));
    return new CreateQueueResult(ProtoConvert.queue(resp.getQueue()), resp.getCreated());
  }

  /**
   * Changes the non-null fields of {@code changes} (and only those) at runtime, and returns the
   * queue after the change. {@code priorities} and {@code partitions} may only grow; {@code fifo}
   * is fixed at create.
   */
  public Queue updateQueue(String name, QueueConfig changes) {
    List<String> paths = new ArrayList<>();
    dev.runlater.v1.QueueConfig config = ProtoConvert.queueConfig(changes, paths);
    if (paths.isEmpty()) {
      throw new IllegalArgumentException("updateQueue needs at least one non-null field");
    }
    UpdateQueueRequest req =
        UpdateQueueRequest.newBuilder()
            .setName(name)
            .setConfig(config)
            .setUpdateMask(FieldMask.newBuilder().addAllPaths(paths))
            .build();
    return ProtoConvert.queue(call(() -> queues().updateQueue(req)).getQueue());
  }

  /** Deletes a queue and every job in it; false if there was no such queue. */
  public boolean deleteQueue(String name) {
    DeleteQueueRequest req = DeleteQueueRequest.newBuilder().setName(name).build();
    return call(() -> queues().deleteQueue(req).getDeleted());
  }

  /** Every queue, by name, with config and live stats. */
  public List<Queue> listQueues() {
    ListQueuesRequest req = ListQueuesRequest.getDefaultInstance();
    return call(
        () -> queues().listQueues(req).getQueuesList().stream().map(ProtoConvert::queue).toList());
  }

  /** One queue with config and live stats; throws NOT_FOUND if there is none. */
  public Queue getQueue(String name) {
    GetQueueRequest req = GetQueueRequest.newBuilder().setName(name).build();
    return ProtoConvert.queue(call(() -> queues().getQueue(req)).getQueue());
  }

  // ------------------------------------------------------------- workers

  /**
   * Takes up to {@code limit} due jobs of {@code queue}, waiting up to {@code wait} (null or zero:
   * return at once, at most 60 s) when none is due.
   */
  public List<DequeuedJob> dequeue(String queue, int limit, Duration wait) {
    return dequeue(queue, DequeueOptions.builder().limit(limit).maxWait(wait).build()).jobs();
  }

  /**
   * Applies {@code options.acks()} (the previous batch's outcomes) first, then takes up to {@code
   * options.limit()} due jobs of {@code queue}, long-polling up to {@code options.maxWait()}. The
   * call's deadline is the default deadline plus the wait.
   */
  public DequeueResult dequeue(String queue, DequeueOptions options) {
    Objects.requireNonNull(queue, "queue");
    DequeueRequest req = ProtoConvert.dequeueRequest(queue, options);
    Duration deadline = ProtoConvert.dequeueDeadline(defaultDeadline, options.maxWait());
    return call(
        () -> ProtoConvert.dequeueResult(queue, withDeadline(workers, deadline).dequeue(req)));
  }

  /** Returns up to {@code limit} due jobs, with bodies, without claiming them (a dry run). */
  public List<DequeuedJob> peek(String queue, int limit) {
    DequeueRequest req =
        DequeueRequest.newBuilder().setQueue(queue).setLimit(limit).setDryRun(true).build();
    return call(() -> workers().dequeue(req)).getJobsList().stream()
        .map(j -> ProtoConvert.dequeuedJob(queue, j))
        .toList();
  }

  /**
   * Reports outcomes of jobs of one queue. Each job gets its own outcome (a stale claim never fails
   * the batch): the successes first, then the failures, each in request order.
   */
  public List<JobOutcome> ack(String queue, List<Ack> acks) {
    AckRequest req = ProtoConvert.ackRequest(queue, acks);
    return ProtoConvert.outcomes(call(() -> workers().ack(req)).getResultsList());
  }

  /** Changes running jobs of one queue; one outcome per checkpoint, in request order. */
  public List<JobOutcome> checkpoint(String queue, List<Checkpoint> checkpoints) {
    CheckpointRequest req = ProtoConvert.checkpointRequest(queue, checkpoints);
    return ProtoConvert.outcomes(call(() -> workers().checkpoint(req)).getResultsList());
  }

  /**
   * Opens a {@code WorkerService.DequeueStream} for {@code queue}: one long-lived stream that
   * carries jobs to the caller (never more than the credits granted) and acks to the server. The
   * first message names the queue and grants {@code credit}; grant more and send acks with {@link
   * DequeueStream#send}. The {@link dev.runlater.worker.Worker} uses it by default; call it
   * yourself only to write a worker of your own.
   *
   * @param queue the queue to take jobs from
   * @param workerId free text naming the worker, for the server's logs
   * @param credit jobs the caller can take now (0 to 10,000)
   * @param listener told of jobs, ack answers and the stream's end, on a gRPC thread
   */
  public DequeueStream dequeueStream(
      String queue, String workerId, int credit, DequeueStream.Listener listener) {
    return DequeueStream.open(streams, target, queue, workerId, credit, listener);
  }

  /** The same client's calls as {@link java.util.concurrent.CompletableFuture}s. */
  public AsyncRunlaterClient async() {
    return async;
  }

  /** The server this client calls, as given to {@link #builder}. */
  public String target() {
    return target;
  }

  /** Shuts the channel down, waiting briefly for calls in flight. */
  @Override
  public void close() {
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }

  // ------------------------------------------------------------- helpers

  private JobServiceGrpc.JobServiceBlockingStub jobs() {
    return withDeadline(jobs, defaultDeadline);
  }

  /** Workflows and schedules (docs/workflows.md), on this client's channel and credentials. */
  public WorkflowClient workflows() {
    return WorkflowClient.over(
        channel, jobs.getCallOptions().getCredentials(), target, defaultDeadline);
  }

  private QueueServiceGrpc.QueueServiceBlockingStub queues() {
    return withDeadline(queues, defaultDeadline);
  }

  private WorkerServiceGrpc.WorkerServiceBlockingStub workers() {
    return withDeadline(workers, defaultDeadline);
  }

  static <S extends io.grpc.stub.AbstractStub<S>> S withDeadline(S stub, Duration d) {
    return stub.withDeadlineAfter(d.toNanos(), TimeUnit.NANOSECONDS);
  }

  private <T> T call(Supplier<T> rpc) {
    try {
      return rpc.get();
    } catch (StatusRuntimeException e) {
      throw Errors.from(e, target);
    }
  }
}
