package dev.runlater.worker;

import dev.runlater.v1.AckRequest;
import dev.runlater.v1.DequeueRequest;
import dev.runlater.v1.DequeueResponse;
import dev.runlater.v1.WorkerServiceGrpc;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.ForwardingClientCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Status;
import java.util.HashMap;
import java.util.Map;

/**
 * Watches a worker's calls from the client side: Dequeue calls in flight, the jobs they ask for,
 * the jobs handed out whose handler has not finished (the test's handler calls {@link #finished()}
 * last), and every ack sent (piggy-backed or in an Ack call).
 *
 * <p>Each count moves at a point that comes before the worker frees the matching slot: a call's
 * jobs move from "asked for" to "held" in onClose, which runs before the blocking call returns; a
 * job leaves "held" when its handler is done. So the tally never counts more than the worker holds,
 * and a worker asking for more than its free slots shows as {@code maxSpokenFor} above its
 * concurrency.
 */
final class DequeueTally implements ClientInterceptor {
  private static final String DEQUEUE = WorkerServiceGrpc.getDequeueMethod().getFullMethodName();
  private static final String ACK = WorkerServiceGrpc.getAckMethod().getFullMethodName();

  private int inFlight;
  private int maxInFlight;
  private int requested;
  private int held;
  private int maxSpokenFor;
  private int maxLimit;
  private final Map<String, Integer> acks = new HashMap<>();

  synchronized int inFlight() {
    return inFlight;
  }

  /** Most Dequeue calls in flight at once. */
  synchronized int maxInFlight() {
    return maxInFlight;
  }

  /** Most slots spoken for at once: jobs asked for by calls in flight plus jobs held. */
  synchronized int maxSpokenFor() {
    return maxSpokenFor;
  }

  /** Largest limit of one Dequeue. */
  synchronized int maxLimit() {
    return maxLimit;
  }

  /** How many times each job's success or failure was sent. */
  synchronized Map<String, Integer> acks() {
    return Map.copyOf(acks);
  }

  /** A handler is done with its job. */
  synchronized void finished() {
    held--;
  }

  private synchronized void sent(DequeueRequest req) {
    inFlight++;
    requested += req.getLimit();
    maxInFlight = Math.max(maxInFlight, inFlight);
    maxSpokenFor = Math.max(maxSpokenFor, requested + held);
    maxLimit = Math.max(maxLimit, req.getLimit());
    count(req.getAck());
  }

  private synchronized void closed(int limit, int handedOut) {
    inFlight--;
    requested -= limit;
    held += handedOut;
  }

  private synchronized void count(AckRequest ack) {
    ack.getSucceededList().forEach(s -> acks.merge(s.getJobId(), 1, Integer::sum));
    ack.getFailedList().forEach(f -> acks.merge(f.getJobId(), 1, Integer::sum));
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    ClientCall<Q, R> call = next.newCall(method, options);
    if (method.getFullMethodName().equals(ACK)) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
        @Override
        public void sendMessage(Q message) {
          count((AckRequest) message);
          super.sendMessage(message);
        }
      };
    }
    if (!method.getFullMethodName().equals(DEQUEUE)) {
      return call;
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      // Set on the caller's thread before the call can close; read in onClose on the same one
      // (blocking calls run their listener on the calling thread).
      private int limit = -1;
      private int handedOut;

      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(
            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onMessage(R message) {
                handedOut = ((DequeueResponse) message).getJobsCount();
                super.onMessage(message);
              }

              @Override
              public void onClose(Status status, Metadata trailers) {
                if (limit >= 0) {
                  closed(limit, handedOut);
                }
                super.onClose(status, trailers);
              }
            },
            headers);
      }

      @Override
      public void sendMessage(Q message) {
        DequeueRequest req = (DequeueRequest) message;
        limit = req.getLimit();
        sent(req);
        super.sendMessage(message);
      }
    };
  }
}
