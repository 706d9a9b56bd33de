package dev.runlater;

import java.util.List;

/**
 * Which run of which workflow job a {@link DequeuedJob} is (docs/workflows.md).
 *
 * @param workflow the workflow
 * @param version its version
 * @param instanceId the instance
 * @param job the job's name in the workflow
 * @param run the run's number, from 1
 * @param triggeredBy the events that triggered the run, with the upstream outputs
 */
public record WorkflowContext(
    String workflow,
    int version,
    String instanceId,
    String job,
    int run,
    List<WorkflowEvent> triggeredBy) {}
