package dev.runlater.worker;

import dev.runlater.v1.AckRequest;
import dev.runlater.v1.DequeueStreamRequest;
import dev.runlater.v1.DequeueStreamResponse;
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
 * Watches a stream-mode worker from the client side: the calls it makes, the credits it grants and
 * the jobs they brought, the jobs whose handler has not finished (the test's handler calls {@link
 * #finished()} last), and every ack sent (on a stream or in an Ack call).
 *
 * <p>Each count moves before the worker frees the matching slot (credits are counted as they are
 * sent, after the worker took their slots; a job leaves "held" before its handler returns), so the
 * tally never counts more than the worker holds, and a worker granting more credits than its free
 * slots shows as {@link #maxSpokenFor()} above its concurrency.
 *
 * <p>With {@link #breakOnFirstAck()}, the first stream message carrying acks is swallowed and the
 * stream cut off, as a network failure would: the server never sees those acks.
 */
final class StreamTally implements ClientInterceptor {
  private static final String STREAM =
      WorkerServiceGrpc.getDequeueStreamMethod().getFullMethodName();
  private static final String ACK = WorkerServiceGrpc.getAckMethod().getFullMethodName();

  private final Map<String, Integer> calls = new HashMap<>();
  private final Map<String, Integer> acks = new HashMap<>();
  private int unused; // credits granted on the open stream and not yet used
  private int held;
  private int maxSpokenFor;
  private int grants;
  private boolean breakOnFirstAck;
  private boolean broke;

  /** Swallow the first stream message that carries acks, and cut its stream off. */
  synchronized StreamTally breakOnFirstAck() {
    breakOnFirstAck = true;
    return this;
  }

  /** Calls made, by method name ("DequeueStream", "Dequeue", "Ack", ...). */
  synchronized Map<String, Integer> calls() {
    return Map.copyOf(calls);
  }

  /** How many times each job's success or failure was sent. */
  synchronized Map<String, Integer> acks() {
    return Map.copyOf(acks);
  }

  /** Most slots spoken for at once: credits not yet used plus jobs held. */
  synchronized int maxSpokenFor() {
    return maxSpokenFor;
  }

  /** Stream messages that granted credits. */
  synchronized int grants() {
    return grants;
  }

  /** A handler is done with its job. */
  synchronized void finished() {
    held--;
  }

  private synchronized void count(AckRequest ack) {
    ack.getSucceededList().forEach(s -> acks.merge(s.getJobId(), 1, Integer::sum));
    ack.getFailedList().forEach(f -> acks.merge(f.getJobId(), 1, Integer::sum));
  }

  /** Counts a stream message; false if it is to be swallowed. */
  private synchronized boolean sent(DequeueStreamRequest req) {
    count(req.getAck());
    if (breakOnFirstAck && !broke && req.hasAck()) {
      broke = true;
      return false;
    }
    if (req.getCredit() > 0) {
      grants++;
      unused += req.getCredit();
      maxSpokenFor = Math.max(maxSpokenFor, unused + held);
    }
    return true;
  }

  private synchronized void received(DequeueStreamResponse res) {
    unused -= res.getJobsCount();
    held += res.getJobsCount();
  }

  private synchronized void streamClosed() {
    unused = 0; // the server forgets a stream's credits when it ends
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    synchronized (this) {
      calls.merge(method.getBareMethodName(), 1, Integer::sum);
    }
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
    if (!method.getFullMethodName().equals(STREAM)) {
      return call;
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        super.start(
            new ForwardingClientCallListener.SimpleForwardingClientCallListener<>(listener) {
              @Override
              public void onMessage(R message) {
                received((DequeueStreamResponse) message);
                super.onMessage(message);
              }

              @Override
              public void onClose(Status status, Metadata trailers) {
                streamClosed();
                super.onClose(status, trailers);
              }
            },
            headers);
      }

      private boolean cut; // messages sent after the cut are lost with the stream

      @Override
      public void sendMessage(Q message) {
        if (cut) {
          return;
        }
        if (sent((DequeueStreamRequest) message)) {
          super.sendMessage(message);
        } else {
          cut = true;
          cancel("the test breaks the stream", null);
        }
      }

      @Override
      public void halfClose() {
        if (!cut) {
          super.halfClose();
        }
      }
    };
  }
}
