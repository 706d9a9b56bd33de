package dev.runlater;

import java.util.List;

/**
 * What a Dequeue returned.
 *
 * @param jobs the jobs handed out
 * @param ackOutcomes outcomes of the acks piggy-backed on the request (empty if none)
 */
public record DequeueResult(List<DequeuedJob> jobs, List<JobOutcome> ackOutcomes) {}
