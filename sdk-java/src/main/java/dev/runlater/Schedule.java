package dev.runlater;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A cron schedule that starts a workflow instance or enqueues a job (docs/workflows.md), as the
 * server answers it. Build one to create with {@link #forWorkflow} or {@link #forJob}.
 *
 * @param name its name
 * @param cron the cron expression
 * @param timeZone its IANA time zone
 * @param overlap what a fire does while the last one's work still runs
 * @param paused whether it is paused
 * @param nextFireAt the next fire time; null when paused
 * @param lastStarted the instance or job id the last fire started
 * @param fires how many fires started something
 * @param history the latest fires, oldest first
 */
public record Schedule(
    String name,
    String cron,
    String timeZone,
    Overlap overlap,
    boolean paused,
    Instant nextFireAt,
    String lastStarted,
    long fires,
    List<Fire> history) {

  /** runlater.v1.OverlapPolicy. */
  public enum Overlap {
    UNSPECIFIED,
    SKIP,
    ALLOW,
    CANCEL_PREVIOUS
  }

  /**
   * One fire.
   *
   * @param outcome what it did
   * @param at the fire time
   * @param through the last time of a MISSED range
   * @param firedAt when it ran
   * @param started the instance or job id it started
   * @param previous the previous fire's, for SKIPPED and CANCEL_PREVIOUS
   * @param error why it FAILED
   */
  public record Fire(
      FireOutcome outcome,
      Instant at,
      Instant through,
      Instant firedAt,
      String started,
      String previous,
      String error) {}

  /** runlater.v1.FireOutcome. */
  public enum FireOutcome {
    UNSPECIFIED,
    STARTED,
    SKIPPED,
    MISSED,
    FAILED
  }

  /** A schedule that starts an instance of {@code workflow} at each time of {@code cron}. */
  public static Spec forWorkflow(String name, String cron, String workflow) {
    return new Spec(name, cron, Objects.requireNonNull(workflow, "workflow"), null, null);
  }

  /** A schedule that enqueues {@code body} on {@code queue} at each time of {@code cron}. */
  public static Spec forJob(String name, String cron, String queue, byte[] body) {
    return new Spec(name, cron, null, Objects.requireNonNull(queue, "queue"), body);
  }

  /** What {@link WorkflowClient#createSchedule} sends. */
  public static final class Spec {
    final String name;
    final String cron;
    final String workflow;
    final String queue;
    final byte[] body;
    final List<ExternalEvent> events = new ArrayList<>();
    boolean keepOpen;
    Overlap overlap = Overlap.SKIP;
    String timeZone = "";
    Duration catchUpWindow;
    boolean paused;

    private Spec(String name, String cron, String workflow, String queue, byte[] body) {
      this.name = Objects.requireNonNull(name, "name");
      this.cron = Objects.requireNonNull(cron, "cron");
      this.workflow = workflow;
      this.queue = queue;
      this.body = body == null ? new byte[0] : body;
    }

    /** Events each started instance gets on its external inputs. */
    public Spec event(ExternalEvent event) {
      events.add(Objects.requireNonNull(event, "event"));
      return this;
    }

    /** Starts instances keep_open. */
    public Spec keepOpen(boolean keepOpen) {
      this.keepOpen = keepOpen;
      return this;
    }

    /** What a fire does while the last one's work still runs; default SKIP. */
    public Spec overlap(Overlap overlap) {
      this.overlap = Objects.requireNonNull(overlap, "overlap");
      return this;
    }

    /** The IANA time zone of the cron; default UTC. */
    public Spec timeZone(String timeZone) {
      this.timeZone = Objects.requireNonNull(timeZone, "timeZone");
      return this;
    }

    /** After downtime, fire the latest missed time if it is at most this late. */
    public Spec catchUpWindow(Duration window) {
      this.catchUpWindow = Objects.requireNonNull(window, "window");
      return this;
    }

    /** Creates it paused. */
    public Spec paused(boolean paused) {
      this.paused = paused;
      return this;
    }
  }
}
