package dev.runlater;

/**
 * The outcome for one job of an Ack or Checkpoint.
 *
 * @param jobId the job's id as sent
 * @param outcome what happened
 */
public record JobOutcome(String jobId, AckOutcome outcome) {}
