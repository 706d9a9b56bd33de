package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.worker.JobResult;
import dev.runlater.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The instance and schedule helpers of {@link WorkflowClient} against a real server: listings that
 * filter and follow page tokens, cancel/close/rerun/disable/enable, a schedule's whole life.
 */
class WorkflowCallsTest extends ServerTest {
  /** A workflow of one job "a" on {@code queue}, fed by the external input "go". */
  private static String oneJobWorkflow(String queue) {
    String name = TestServer.queueName("flow");
    client
        .workflows()
        .apply(Workflow.named(name).job(Workflow.job("a", queue).external("go")).build());
    return name;
  }

  private static Set<String> ids(Iterable<Instance> instances) {
    Set<String> ids = new TreeSet<>();
    instances.forEach(i -> ids.add(i.instanceId()));
    return ids;
  }

  @Test
  void listsInstancesByWorkflowAndStateAcrossPages() {
    WorkflowClient wf = client.workflows();
    String q = newQueue("wfc", QueueConfig.defaults());
    String a = oneJobWorkflow(q);
    String b = oneJobWorkflow(q);
    List<Instance> started = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      started.add(wf.start(a, List.of(), true));
    }
    wf.start(b, List.of(), true);
    wf.cancel(started.get(0).instanceId());

    assertEquals(ids(started), ids(wf.listInstances(a, null, 1)));
    assertEquals(ids(started.subList(1, 3)), ids(wf.listInstances(a, Instance.State.RUNNING, 1)));
    assertEquals(
        List.of(started.get(0).instanceId()),
        wf.listInstances(a, Instance.State.CANCELLED, 2).stream()
            .map(Instance::instanceId)
            .toList());
    assertEquals(1, wf.listInstances(a, null, 1).stream().limit(1).count(), "lazy: one page read");
  }

  @Test
  void refusesAPageSizeOutside1To1000NamingTheBound() {
    WorkflowClient wf = client.workflows();
    var tooBig =
        assertThrows(IllegalArgumentException.class, () -> wf.listInstances(null, null, 1001));
    assertEquals("pageSize 1001: 1 to 1000 (0: the server's default)", tooBig.getMessage());
    assertThrows(IllegalArgumentException.class, () -> wf.listSchedules(-1));
  }

  @Test
  void rerunsDisablesEnablesClosesAndCancels() throws Exception {
    WorkflowClient wf = client.workflows();
    String q = newQueue("wfc", QueueConfig.defaults());
    String name = oneJobWorkflow(q);
    AtomicInteger handled = new AtomicInteger();
    try (Worker worker = Worker.builder(client).build()) {
      worker.register(
          q,
          job -> {
            handled.incrementAndGet();
            return JobResult.success("ok");
          });
      worker.start();
      String id = wf.start(name, List.of(ExternalEvent.of("go")), true).instanceId();
      awaitEndedRuns(wf, id, 1);
      assertEquals(Instance.State.RUNNING, wf.rerunJob(id, "a", 1).state());
      awaitEndedRuns(wf, id, 2);

      assertEquals(Instance.JobState.DISABLED, wf.disableJob(id, "a").jobs().get(0).state());
      Instance fed = wf.postEvent(id, ExternalEvent.of("go"));
      assertEquals(1, fed.jobs().get(0).pendingEvents().size(), "it gathers; nothing runs");
      assertFalse(wf.enableJob(id, "a").jobs().get(0).state() == Instance.JobState.DISABLED);
      awaitEndedRuns(wf, id, 3);
      assertEquals(Instance.State.SUCCEEDED, wf.close(id).state());
    }
    assertEquals(3, handled.get());
    String other = wf.start(name, List.of(), true).instanceId();
    assertEquals(Instance.State.CANCELLED, wf.cancel(other).state());
    assertEquals(Instance.State.CANCELLED, wf.getInstance(other).state());
  }

  private static void awaitEndedRuns(WorkflowClient wf, String id, int n) {
    Await.until(
        Duration.ofSeconds(10),
        n + " ended runs of job a",
        () ->
            wf.getInstance(id).jobs().get(0).runs().stream()
                    .filter(r -> r.endedAt() != null)
                    .count()
                == n);
  }

  @Test
  void aScheduleIsCreatedListedUpdatedPausedResumedAndDeleted() {
    WorkflowClient wf = client.workflows();
    String q = newQueue("sched", QueueConfig.defaults());
    List<String> names = List.of(TestServer.queueName("s"), TestServer.queueName("s"));
    for (String n : names) {
      var made = wf.createSchedule(Schedule.forJob(n, "0 3 * * *", q, "tick".getBytes()));
      assertTrue(made.created());
      assertNotNull(made.schedule().nextFireAt());
    }
    var again = wf.createSchedule(Schedule.forJob(names.get(0), "@hourly", q, null));
    assertFalse(again.created());
    assertEquals("0 3 * * *", again.schedule().cron());

    Set<String> listed =
        wf.listSchedules(1).stream().map(Schedule::name).collect(Collectors.toSet());
    assertTrue(listed.containsAll(names), listed.toString());

    Schedule updated =
        wf.updateSchedule(
            Schedule.forJob(names.get(0), "30 4 * * *", q, null)
                .timeZone("Europe/Berlin")
                .overlap(Schedule.Overlap.ALLOW));
    assertEquals(
        List.of("30 4 * * *", "Europe/Berlin", Schedule.Overlap.ALLOW),
        List.of(updated.cron(), updated.timeZone(), updated.overlap()));

    Schedule paused = wf.pauseSchedule(names.get(0));
    assertTrue(paused.paused());
    assertNull(paused.nextFireAt());
    Schedule resumed = wf.resumeSchedule(names.get(0));
    assertFalse(resumed.paused());
    assertNotNull(resumed.nextFireAt());

    assertTrue(wf.deleteSchedule(names.get(0)));
    assertFalse(wf.deleteSchedule(names.get(0)));
    assertThrows(NotFoundException.class, () -> wf.getSchedule(names.get(0)));
    wf.deleteSchedule(names.get(1));
  }
}
