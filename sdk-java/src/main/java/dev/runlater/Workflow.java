package dev.runlater;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A workflow definition (docs/workflows.md), built in code and applied with {@link
 * WorkflowClient#apply}:
 *
 * <pre>{@code
 * Workflow etl = Workflow.named("etl")
 *     .job(Workflow.job("extract", "etl").external("files_ready"))
 *     .job(Workflow.job("load", "etl").after("extract").continueOnFailure())
 *     .build();
 * }</pre>
 *
 * @param name the workflow's name
 * @param jobs its jobs, in definition order
 */
public record Workflow(String name, List<Job> jobs) {
  /** Largest result payload of a run or an external event: 4 KiB. */
  public static final int MAX_RESULT_BYTES = 4096;

  private static final int MAX_JOBS = 100;
  private static final int MAX_INPUTS = 10;
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.-]{1,64}");

  /** Starts a definition. */
  public static Builder named(String name) {
    return new Builder(name);
  }

  /** Starts a job that runs on {@code queue}. */
  public static Job job(String name, String queue) {
    return new Job(name, queue);
  }

  /**
   * {@code result} (null: empty), or IllegalArgumentException naming {@code what} if it is over
   * {@link #MAX_RESULT_BYTES}.
   */
  public static byte[] checkResult(byte[] result, String what) {
    if (result == null) {
      return new byte[0];
    }
    if (result.length > MAX_RESULT_BYTES) {
      throw new IllegalArgumentException(
          what + " is " + result.length + " bytes; at most " + MAX_RESULT_BYTES);
    }
    return result;
  }

  private static String checkName(String what, String name) {
    Objects.requireNonNull(name, what);
    if (!NAME.matcher(name).matches()) {
      throw new IllegalArgumentException(
          what + " \"" + name + "\": use 1 to 64 of A-Z a-z 0-9 _ . -");
    }
    return name;
  }

  /** One input of a job: an upstream job's output (seeded or not) or an external input. */
  public record Input(String job, String external, boolean seed) {}

  /** One job of a definition; its setters return it for chaining. */
  public static final class Job {
    final String name;
    final String queue;
    final List<Input> inputs = new ArrayList<>();
    boolean continueOnFailure;
    byte[] body = new byte[0];
    int priority;
    int attemptsAllowed;

    private Job(String name, String queue) {
      this.name = checkName("job name", name);
      this.queue = Objects.requireNonNull(queue, "queue");
    }

    private Job input(Input i) {
      if (inputs.size() >= MAX_INPUTS) {
        throw new IllegalArgumentException("job " + name + ": at most " + MAX_INPUTS + " inputs");
      }
      inputs.add(i);
      return this;
    }

    /** An input fed by each successful run of {@code job}. */
    public Job after(String job) {
      return input(new Input(Objects.requireNonNull(job, "job"), null, false));
    }

    /** Like {@link #after}, holding one event at start: how a cycle gets going. */
    public Job seed(String job) {
      return input(new Input(Objects.requireNonNull(job, "job"), null, true));
    }

    /** An input fed from outside (StartInstance events, PostEvent) under {@code name}. */
    public Job external(String name) {
      return input(new Input(null, Objects.requireNonNull(name, "name"), false));
    }

    /** A failed run lets the rest go on (the instance ends FAILED) instead of aborting it. */
    public Job continueOnFailure() {
      this.continueOnFailure = true;
      return this;
    }

    /** The body of each run's queue job. */
    public Job body(byte[] body) {
      this.body = Objects.requireNonNull(body, "body");
      return this;
    }

    /** Priority of its queue jobs; default 1 (the highest). */
    public Job priority(int priority) {
      this.priority = priority;
      return this;
    }

    /** Attempts of its queue jobs; default the queue's. */
    public Job attemptsAllowed(int attemptsAllowed) {
      this.attemptsAllowed = attemptsAllowed;
      return this;
    }

    public String name() {
      return name;
    }

    public String queue() {
      return queue;
    }
  }

  /** Collects jobs; {@link #build} checks the inputs. */
  public static final class Builder {
    private final String name;
    private final Map<String, Job> jobs = new LinkedHashMap<>();

    private Builder(String name) {
      this.name = checkName("workflow name", name);
    }

    /** Adds a job; it may take input from jobs added later (cycles are allowed). */
    public Builder job(Job job) {
      if (jobs.containsKey(job.name)) {
        throw new IllegalArgumentException(
            "workflow " + name + ": job " + job.name + " is defined twice");
      }
      if (jobs.size() >= MAX_JOBS) {
        throw new IllegalArgumentException("workflow " + name + ": at most " + MAX_JOBS + " jobs");
      }
      jobs.put(job.name, job);
      return this;
    }

    /** The definition; refuses one without jobs or with an input from a job not defined. */
    public Workflow build() {
      if (jobs.isEmpty()) {
        throw new IllegalArgumentException("workflow " + name + ": define at least one job");
      }
      for (Job j : jobs.values()) {
        for (Input i : j.inputs) {
          if (i.job() != null && !jobs.containsKey(i.job())) {
            throw new IllegalArgumentException(
                "workflow "
                    + name
                    + ": job "
                    + j.name
                    + " takes input from "
                    + i.job()
                    + ", which is not defined");
          }
        }
      }
      return new Workflow(name, List.copyOf(jobs.values()));
    }
  }
}
