package dev.runlater;

/** The state of a job as users see it (mirrors {@code runlater.v1.JobState}). */
public enum JobState {
  /** Waiting to run: due now, or scheduled for later. */
  PENDING,
  /** Handed to a worker, which holds a claim until it expires. */
  RUNNING,
  /** A worker acknowledged success. */
  SUCCEEDED,
  /** The last attempt failed, timed out, or the worker said not to retry. */
  FAILED
}
