package dev.runlater;

import java.time.Instant;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * One run of a workflow, with every job's state and latest runs.
 *
 * @param instanceId its id
 * @param workflow the workflow
 * @param version the version it runs
 * @param state its state
 * @param keepOpen started keep_open and not closed yet
 * @param createdAt when it started
 * @param endedAt when it ended; null while running
 * @param jobs every job's state
 */
public record Instance(
    String instanceId,
    String workflow,
    int version,
    State state,
    boolean keepOpen,
    Instant createdAt,
    Instant endedAt,
    List<Job> jobs) {

  /** runlater.v1.InstanceState. */
  public enum State {
    UNSPECIFIED,
    RUNNING,
    SUCCEEDED,
    FAILED,
    ABORTED,
    CANCELLED
  }

  /** True once the instance has ended (any state but RUNNING). */
  public boolean ended() {
    return state != State.RUNNING;
  }

  /** The job named {@code name}. */
  public Job job(String name) {
    return jobs.stream()
        .filter(j -> j.name().equals(name))
        .findFirst()
        .orElseThrow(
            () -> new NoSuchElementException("instance " + instanceId + " has no job " + name));
  }

  /**
   * A job's state in the instance.
   *
   * @param name the job's name
   * @param state its state
   * @param pendingEvents events waiting in its inputs, oldest first
   * @param runs its latest runs, oldest first (at most 20 kept)
   * @param runCount how many runs it has had in all
   * @param droppedEvents events dropped because an input was full
   */
  public record Job(
      String name,
      JobState state,
      List<WorkflowEvent> pendingEvents,
      List<Run> runs,
      int runCount,
      int droppedEvents) {}

  /** runlater.v1.InstanceJobState. */
  public enum JobState {
    UNSPECIFIED,
    WAITING,
    RUNNABLE,
    RUNNING,
    DISABLED
  }

  /**
   * One run of a job.
   *
   * @param run from 1
   * @param jobId the queue job that carries it
   * @param triggeredBy the events it consumed, one per input
   * @param outcome how it ended
   * @param customStatus its output's custom status
   * @param result its output's result payload
   * @param queuedAt when it was queued
   * @param endedAt when it ended; null while queued
   * @param trimmed its triggering events' results were dropped to keep the instance within its size
   *     bound (docs/workflows.md): it can no longer be re-run
   */
  public record Run(
      int run,
      String jobId,
      List<WorkflowEvent> triggeredBy,
      Outcome outcome,
      String customStatus,
      byte[] result,
      Instant queuedAt,
      Instant endedAt,
      boolean trimmed) {}

  /** runlater.v1.RunOutcome. */
  public enum Outcome {
    UNSPECIFIED,
    QUEUED,
    SUCCEEDED,
    FAILED,
    ABANDONED
  }
}
