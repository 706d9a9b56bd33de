package dev.runlater;

import dev.runlater.v1.JobServiceGrpc;
import dev.runlater.v1.WorkerServiceGrpc;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The main calls of a {@link RunlaterClient} as {@link CompletableFuture}s, on the same channel
 * (get one with {@link RunlaterClient#async()}; closing the {@code RunlaterClient} closes it too).
 * A failed call completes its future exceptionally with a {@link RunlaterException} (or the
 * subclass of its family). Cancelling a future cancels its call.
 *
 * <p>The futures complete on gRPC's threads: hand long work to an executor of your own ({@code
 * thenApplyAsync(fn, executor)}) rather than block those threads.
 */
public final class AsyncRunlaterClient {
  private final JobServiceGrpc.JobServiceStub jobs;
  private final WorkerServiceGrpc.WorkerServiceStub workers;
  private final String target;
  private final Duration defaultDeadline;

  AsyncRunlaterClient(
      JobServiceGrpc.JobServiceStub jobs,
      WorkerServiceGrpc.WorkerServiceStub workers,
      String target,
      Duration defaultDeadline) {
    this.jobs = jobs;
    this.workers = workers;
    this.target = target;
    this.defaultDeadline = defaultDeadline;
  }

  /** See {@link RunlaterClient#enqueue(JobSpec)}. */
  public CompletableFuture<String> enqueue(JobSpec spec) {
    // Each method converts inside call() rather than with thenApply on another method's future:
    // cancelling a derived future would not cancel the call.
    return call(
        stub(jobs, defaultDeadline)::enqueue,
        ProtoConvert.enqueueRequest(List.of(spec)),
        resp -> resp.getJobIds(0));
  }

  /** See {@link RunlaterClient#enqueue(List)}. */
  public CompletableFuture<List<String>> enqueue(List<JobSpec> specs) {
    return call(
        stub(jobs, defaultDeadline)::enqueue,
        ProtoConvert.enqueueRequest(specs),
        resp -> resp.getJobIdsList());
  }

  /** See {@link RunlaterClient#getJob}. */
  public CompletableFuture<Optional<Job>> getJob(String jobId, boolean includeBody) {
    return call(
        stub(jobs, defaultDeadline)::getJobs,
        ProtoConvert.getJobsRequest(List.of(jobId), includeBody),
        resp -> ProtoConvert.jobs(resp).stream().findFirst());
  }

  /** See {@link RunlaterClient#getJobs}. */
  public CompletableFuture<List<Job>> getJobs(List<String> jobIds, boolean includeBody) {
    return call(
        stub(jobs, defaultDeadline)::getJobs,
        ProtoConvert.getJobsRequest(jobIds, includeBody),
        ProtoConvert::jobs);
  }

  /** See {@link RunlaterClient#dequeue(String, int, Duration)}. */
  public CompletableFuture<List<DequeuedJob>> dequeue(String queue, int limit, Duration wait) {
    // Not dequeue(options).thenApply(...): cancelling that future would not cancel the call.
    DequeueOptions options = DequeueOptions.builder().limit(limit).maxWait(wait).build();
    return call(
        stub(workers, ProtoConvert.dequeueDeadline(defaultDeadline, options.maxWait()))::dequeue,
        ProtoConvert.dequeueRequest(queue, options),
        resp -> ProtoConvert.dequeueResult(queue, resp).jobs());
  }

  /** See {@link RunlaterClient#dequeue(String, DequeueOptions)}. */
  public CompletableFuture<DequeueResult> dequeue(String queue, DequeueOptions options) {
    Duration deadline = ProtoConvert.dequeueDeadline(defaultDeadline, options.maxWait());
    return call(
        stub(workers, deadline)::dequeue,
        ProtoConvert.dequeueRequest(queue, options),
        resp -> ProtoConvert.dequeueResult(queue, resp));
  }

  /** See {@link RunlaterClient#ack}. */
  public CompletableFuture<List<JobOutcome>> ack(String queue, List<Ack> acks) {
    return call(
        stub(workers, defaultDeadline)::ack,
        ProtoConvert.ackRequest(queue, acks),
        resp -> ProtoConvert.outcomes(resp.getResultsList()));
  }

  /** See {@link RunlaterClient#checkpoint}. */
  public CompletableFuture<List<JobOutcome>> checkpoint(
      String queue, List<Checkpoint> checkpoints) {
    return call(
        stub(workers, defaultDeadline)::checkpoint,
        ProtoConvert.checkpointRequest(queue, checkpoints),
        resp -> ProtoConvert.outcomes(resp.getResultsList()));
  }

  private static <S extends io.grpc.stub.AbstractStub<S>> S stub(S stub, Duration deadline) {
    return RunlaterClient.withDeadline(stub, deadline);
  }

  /** Starts one unary call and converts its answer; cancelling the future cancels the call. */
  private <Q, R, T> CompletableFuture<T> call(
      BiConsumer<Q, io.grpc.stub.StreamObserver<R>> rpc, Q request, Function<R, T> convert) {
    CompletableFuture<T> future = new CompletableFuture<>();
    rpc.accept(
        request,
        new ClientResponseObserver<Q, R>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<Q> call) {
            future.whenComplete(
                (v, e) -> {
                  if (future.isCancelled()) {
                    call.cancel("the caller cancelled the future", null);
                  }
                });
          }

          @Override
          public void onNext(R response) {
            try {
              future.complete(convert.apply(response));
            } catch (RuntimeException e) {
              future.completeExceptionally(e); // e.g. a state this SDK does not know
            }
          }

          @Override
          public void onError(Throwable t) {
            future.completeExceptionally(Errors.from(t, target));
          }

          @Override
          public void onCompleted() {}
        });
    return future;
  }
}
