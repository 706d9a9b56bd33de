package dev.runlater;

import dev.runlater.v1.DequeueStreamRequest;
import dev.runlater.v1.DequeueStreamResponse;
import dev.runlater.v1.WorkerServiceGrpc;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.List;

/**
 * One open {@code WorkerService.DequeueStream} (see {@link RunlaterClient#dequeueStream}): the
 * caller grants credits (jobs it can take, added up; at most 10,000 not yet used) and sends acks;
 * the server pushes due jobs, never more than the credits not yet used, and answers every message
 * that carried acks, in the order sent. {@link #closeSend()} ends the caller's side: the server
 * stops handing out, answers the acks it has, and ends the stream.
 *
 * <p>{@link #send} and {@link #closeSend} may be called from any thread.
 */
public final class DequeueStream {
  /**
   * Told what the server sends, on a gRPC thread, one call at a time. Keep the callbacks short: the
   * stream's next message waits for them.
   */
  public interface Listener {
    /** Jobs handed out; each used one credit. */
    void onJobs(List<DequeuedJob> jobs);

    /** The outcomes of the oldest message with acks not yet answered. */
    void onAckResults(List<JobOutcome> outcomes);

    /**
     * The stream ended; nothing more comes. {@code error} is null when the server ended it normally
     * (after {@link #closeSend()}, or when it shuts down gracefully).
     */
    void onEnd(RunlaterException error);
  }

  private final String queue;
  private ClientCallStreamObserver<DequeueStreamRequest> requests;
  private boolean sendClosed; // guarded by this

  private DequeueStream(String queue) {
    this.queue = queue;
  }

  static DequeueStream open(
      WorkerServiceGrpc.WorkerServiceStub stub,
      String target,
      String queue,
      String workerId,
      int credit,
      Listener listener) {
    DequeueStream stream = new DequeueStream(queue);
    stub.dequeueStream(
        new ClientResponseObserver<DequeueStreamRequest, DequeueStreamResponse>() {
          @Override
          public void beforeStart(ClientCallStreamObserver<DequeueStreamRequest> requests) {
            stream.requests = requests;
          }

          @Override
          public void onNext(DequeueStreamResponse res) {
            if (res.getJobsCount() > 0) {
              listener.onJobs(
                  res.getJobsList().stream().map(j -> ProtoConvert.dequeuedJob(queue, j)).toList());
            }
            if (res.hasAck()) {
              listener.onAckResults(ProtoConvert.outcomes(res.getAck().getResultsList()));
            }
          }

          @Override
          public void onError(Throwable t) {
            stream.ended();
            listener.onEnd(Errors.from(t, target));
          }

          @Override
          public void onCompleted() {
            stream.ended();
            listener.onEnd(null);
          }
        });
    synchronized (stream) {
      stream.requests.onNext(
          DequeueStreamRequest.newBuilder()
              .setQueue(queue)
              .setWorkerId(workerId == null ? "" : workerId)
              .setCredit(credit)
              .build());
    }
    return stream;
  }

  /**
   * Grants {@code credit} more jobs and sends {@code acks} (may be empty; the server answers a
   * message with acks through {@link Listener#onAckResults}). Does nothing once the stream ended or
   * {@link #closeSend()} was called.
   *
   * @return false if nothing was sent because the stream is closed
   */
  public synchronized boolean send(int credit, List<Ack> acks) {
    if (sendClosed) {
      return false;
    }
    DequeueStreamRequest.Builder req = DequeueStreamRequest.newBuilder().setCredit(credit);
    if (!acks.isEmpty()) {
      req.setAck(ProtoConvert.ackRequest(queue, acks));
    }
    requests.onNext(req.build());
    return true;
  }

  /** Ends the caller's side: the server answers the acks it has and ends the stream. */
  public synchronized void closeSend() {
    if (!sendClosed) {
      sendClosed = true;
      requests.onCompleted();
    }
  }

  /** Cuts the stream off at once; acks not yet answered may or may not have been applied. */
  public void cancel() {
    synchronized (this) {
      sendClosed = true; // a cancelled call refuses messages
    }
    requests.cancel("cancelled by the client", null);
  }

  private synchronized void ended() {
    sendClosed = true;
  }
}
