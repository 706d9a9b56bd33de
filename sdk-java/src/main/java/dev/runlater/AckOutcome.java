package dev.runlater;

/**
 * What the server did with one job of an Ack or Checkpoint (mirrors {@code runlater.v1.Outcome}).
 */
public enum AckOutcome {
  /** Applied. */
  ACKNOWLEDGED,
  /**
   * Refused: the claim token is not the job's current claim (it expired and the job was handed out
   * again, or the job is no longer RUNNING). Nothing changed.
   */
  STALE_CLAIM,
  /** No such job (never existed, deleted, or garbage-collected). */
  NOT_FOUND
}
