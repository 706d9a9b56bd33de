package dev.runlater;

import java.time.Instant;

/**
 * An event in an input of a workflow job: the output of an upstream run, or an external payload.
 *
 * @param eventId unique in its instance
 * @param input the input it sits in or was consumed from: {@code "job:<name>"} or {@code
 *     "external:<name>"}
 * @param fromJob the job whose run posted it; empty for an external or seed event
 * @param fromRun that run's number
 * @param customStatus the run's custom status (or the external event's)
 * @param result the run's result payload (or the external event's), at most 4 KiB
 * @param postedAt when it was posted
 */
public record WorkflowEvent(
    String eventId,
    String input,
    String fromJob,
    int fromRun,
    String customStatus,
    byte[] result,
    Instant postedAt) {}
