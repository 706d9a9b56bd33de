package dev.runlater.conformance;

import dev.runlater.ExternalEvent;
import dev.runlater.Instance;
import dev.runlater.Schedule;
import dev.runlater.Workflow;
import dev.runlater.WorkflowClient;
import dev.runlater.WorkflowContext;
import dev.runlater.WorkflowEvent;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The Java driver's workflow and schedule ops (conformance/protocol.md) through the SDK's {@link
 * Workflow} builder and {@link WorkflowClient}, with the conversions to and from the protocol's
 * JSON.
 */
final class WorkflowOps {
  private WorkflowOps() {}

  /** Runs a workflow or schedule op into {@code out}; false if {@code op} is not one. */
  @SuppressWarnings("unchecked")
  static boolean run(WorkflowClient c, String op, Map<String, Object> r, Map<String, Object> out)
      throws InterruptedException {
    String id = (String) r.get("instance_id");
    Instance instance;
    switch (op) {
      case "apply_workflow" -> {
        Map<String, Object> w = (Map<String, Object>) r.get("workflow");
        WorkflowClient.Applied applied = c.apply(workflow(w));
        out.put("created", applied.created());
        List<Map<String, Object>> jobs = new ArrayList<>();
        for (Object j : (List<Object>) w.get("jobs")) {
          Map<String, Object> job = (Map<String, Object>) j;
          jobs.add(map("name", job.get("name"), "queue", job.get("queue")));
        }
        out.put("workflow", map("name", w.get("name"), "version", applied.version(), "jobs", jobs));
        return true;
      }
      case "start_instance" ->
          instance =
              c.start(
                  (String) r.get("workflow"),
                  events((List<Object>) r.get("events")),
                  Boolean.TRUE.equals(r.get("keep_open")));
      case "post_event" -> instance = c.postEvent(id, event((Map<String, Object>) r.get("event")));
      case "get_instance" -> instance = c.getInstance(id);
      case "wait_instance" ->
          instance =
              c.waitForInstance(
                  id,
                  Duration.ofMillis(((Number) r.get("timeout_ms")).longValue()),
                  Duration.ofMillis(20));
      case "rerun_job" ->
          instance = c.rerunJob(id, (String) r.get("job"), ((Number) r.get("run")).intValue());
      case "disable_job" -> instance = c.disableJob(id, (String) r.get("job"));
      case "enable_job" -> instance = c.enableJob(id, (String) r.get("job"));
      case "close_instance" -> instance = c.close(id);
      case "cancel_instance" -> instance = c.cancel(id);
      case "create_schedule" -> {
        WorkflowClient.CreatedSchedule created =
            c.createSchedule(schedule((Map<String, Object>) r.get("schedule"), r.get("paused")));
        out.put("created", created.created());
        out.put("schedule", scheduleJson(created.schedule()));
        return true;
      }
      case "get_schedule" -> {
        out.put("schedule", scheduleJson(c.getSchedule((String) r.get("name"))));
        return true;
      }
      default -> {
        return false;
      }
    }
    out.put("instance", instanceJson(instance));
    return true;
  }

  @SuppressWarnings("unchecked")
  private static Workflow workflow(Map<String, Object> w) {
    Workflow.Builder b = Workflow.named((String) w.get("name"));
    for (Object o : (List<Object>) w.get("jobs")) {
      Map<String, Object> j = (Map<String, Object>) o;
      Workflow.Job job = Workflow.job((String) j.get("name"), (String) j.get("queue"));
      for (Object i : (List<Object>) j.getOrDefault("inputs", List.of())) {
        Map<String, Object> in = (Map<String, Object>) i;
        if (in.get("external") instanceof String name) {
          job.external(name);
        } else if (Boolean.TRUE.equals(in.get("seed"))) {
          job.seed((String) in.get("job"));
        } else {
          job.after((String) in.get("job"));
        }
      }
      if ("CONTINUE".equals(j.get("on_failure"))) {
        job.continueOnFailure();
      }
      job.body(bytes(j.get("body_b64")));
      if (j.get("priority") instanceof Number n) {
        job.priority(n.intValue());
      }
      if (j.get("attempts_allowed") instanceof Number n) {
        job.attemptsAllowed(n.intValue());
      }
      b.job(job);
    }
    return b.build();
  }

  @SuppressWarnings("unchecked")
  private static Schedule.Spec schedule(Map<String, Object> s, Object paused) {
    String name = (String) s.get("name");
    String cron = (String) s.get("cron");
    Schedule.Spec spec;
    if (s.get("workflow") instanceof Map<?, ?> w) {
      spec = Schedule.forWorkflow(name, cron, (String) w.get("workflow"));
      events((List<Object>) w.get("events")).forEach(spec::event);
      spec.keepOpen(Boolean.TRUE.equals(w.get("keep_open")));
    } else {
      Map<String, Object> j = (Map<String, Object>) s.get("job");
      spec = Schedule.forJob(name, cron, (String) j.get("queue"), bytes(j.get("body_b64")));
    }
    if (s.get("overlap") instanceof String overlap) {
      spec.overlap(Schedule.Overlap.valueOf(overlap));
    }
    if (s.get("time_zone") instanceof String tz) {
      spec.timeZone(tz);
    }
    if (s.get("catch_up_window_ms") instanceof Number ms) {
      spec.catchUpWindow(Duration.ofMillis(ms.longValue()));
    }
    return spec.paused(Boolean.TRUE.equals(paused));
  }

  @SuppressWarnings("unchecked")
  private static List<ExternalEvent> events(List<Object> events) {
    List<ExternalEvent> out = new ArrayList<>();
    for (Object e : events == null ? List.of() : events) {
      out.add(event((Map<String, Object>) e));
    }
    return out;
  }

  private static ExternalEvent event(Map<String, Object> e) {
    return new ExternalEvent(
        (String) e.get("input"), (String) e.get("custom_status"), bytes(e.get("result_b64")));
  }

  static Map<String, Object> contextJson(WorkflowContext c) {
    if (c == null) {
      return null;
    }
    return map(
        "workflow", c.workflow(),
        "version", c.version(),
        "instance_id", c.instanceId(),
        "job", c.job(),
        "run", c.run(),
        "triggered_by", eventsJson(c.triggeredBy()));
  }

  private static List<Object> eventsJson(List<WorkflowEvent> events) {
    List<Object> out = new ArrayList<>();
    for (WorkflowEvent e : events) {
      out.add(
          map(
              "event_id", e.eventId(),
              "input", e.input(),
              "from_job", e.fromJob(),
              "from_run", e.fromRun(),
              "custom_status", e.customStatus(),
              "result_b64", b64(e.result()),
              "posted_at_ms", ms(e.postedAt())));
    }
    return out;
  }

  private static Map<String, Object> instanceJson(Instance i) {
    List<Object> jobs = new ArrayList<>();
    for (Instance.Job j : i.jobs()) {
      List<Object> runs = new ArrayList<>();
      for (Instance.Run r : j.runs()) {
        runs.add(
            map(
                "run", r.run(),
                "job_id", r.jobId(),
                "triggered_by", eventsJson(r.triggeredBy()),
                "outcome", r.outcome().name(),
                "custom_status", r.customStatus(),
                "result_b64", b64(r.result()),
                "queued_at_ms", ms(r.queuedAt()),
                "ended_at_ms", ms(r.endedAt())));
      }
      jobs.add(
          map(
              "name", j.name(),
              "state", j.state().name(),
              "pending_events", eventsJson(j.pendingEvents()),
              "runs", runs,
              "run_count", j.runCount(),
              "dropped_events", j.droppedEvents()));
    }
    return map(
        "instance_id", i.instanceId(),
        "workflow", i.workflow(),
        "version", i.version(),
        "state", i.state().name(),
        "keep_open", i.keepOpen(),
        "created_at_ms", ms(i.createdAt()),
        "ended_at_ms", ms(i.endedAt()),
        "jobs", jobs);
  }

  private static Map<String, Object> scheduleJson(Schedule s) {
    List<Object> history = new ArrayList<>();
    for (Schedule.Fire f : s.history()) {
      history.add(
          map(
              "outcome", f.outcome().name(),
              "at_ms", ms(f.at()),
              "through_ms", ms(f.through()),
              "fired_at_ms", ms(f.firedAt()),
              "started", f.started(),
              "previous", f.previous(),
              "error", f.error()));
    }
    return map(
        "name", s.name(),
        "cron", s.cron(),
        "overlap", s.overlap().name(),
        "paused", s.paused(),
        "next_fire_at_ms", ms(s.nextFireAt()),
        "last_started", s.lastStarted(),
        "fires", s.fires(),
        "history", history);
  }

  /** A map from alternating keys and values (null values kept, as JSON null). */
  private static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) {
      m.put((String) kv[i], kv[i + 1]);
    }
    return m;
  }

  private static String b64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }

  private static byte[] bytes(Object b64) {
    return b64 == null ? new byte[0] : Base64.getDecoder().decode((String) b64);
  }

  private static Long ms(Instant t) {
    return t == null ? null : t.toEpochMilli();
  }
}
