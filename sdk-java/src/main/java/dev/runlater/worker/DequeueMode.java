package dev.runlater.worker;

/** How a {@link Worker} takes jobs from the server. */
public enum DequeueMode {
  /**
   * One long-lived {@code DequeueStream} per queue (the default): the worker grants credits as its
   * slots free up and sends its acks on the same stream; the server pushes jobs as they become due.
   * Saves a request per batch. A server that does not offer the stream (UNIMPLEMENTED) makes the
   * worker fall back to {@link #POLL} for that queue.
   */
  STREAM,
  /** Long-polling {@code Dequeue} calls, acks piggy-backed on the next call or sent by Ack. */
  POLL
}
