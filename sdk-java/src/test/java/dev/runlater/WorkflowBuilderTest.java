package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.runlater.worker.JobResult;
import org.junit.jupiter.api.Test;

/**
 * The workflow builder's checks, the 4 KiB bound of a run's result and an instance's conversion,
 * without a server.
 */
class WorkflowBuilderTest {
  @Test
  void refusesAnInputFromAJobNotDefinedARepeatedJobAndABadName() {
    var unknown =
        assertThrows(
            IllegalArgumentException.class,
            () -> Workflow.named("w").job(Workflow.job("a", "q").after("nope")).build());
    assertEquals(
        "workflow w: job a takes input from nope, which is not defined", unknown.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> Workflow.named("w").job(Workflow.job("a", "q")).job(Workflow.job("a", "q")));
    assertThrows(IllegalArgumentException.class, () -> Workflow.named("bad name"));
    assertThrows(IllegalArgumentException.class, () -> Workflow.named("w").build());
  }

  @Test
  void keepsJobsInOrderWithTheirInputs() {
    Workflow w =
        Workflow.named("etl")
            .job(Workflow.job("a", "q").external("go").seed("b"))
            .job(Workflow.job("b", "q").after("a").continueOnFailure())
            .build();
    assertEquals("a", w.jobs().get(0).name());
    assertEquals(new Workflow.Input(null, "go", false), w.jobs().get(0).inputs.get(0));
    assertEquals(new Workflow.Input("b", null, true), w.jobs().get(0).inputs.get(1));
    assertTrue(w.jobs().get(1).continueOnFailure);
  }

  @Test
  void aResultOver4KibIsRefusedNamingTheBound() {
    assertArrayEquals(new byte[4096], JobResult.success("ok", new byte[4096]).result());
    var tooBig =
        assertThrows(
            IllegalArgumentException.class, () -> JobResult.success("ok", new byte[4097], true));
    assertEquals("JobResult result is 4097 bytes; at most 4096", tooBig.getMessage());
    assertThrows(IllegalArgumentException.class, () -> new ExternalEvent("go", "", new byte[4097]));
    assertTrue(JobResult.success("s", null, true).noEvents());
  }

  @Test
  void saysWhichRunsWereTrimmed() {
    var message =
        dev.runlater.v1.Instance.newBuilder()
            .setInstanceId("i1")
            .addJobs(
                dev.runlater.v1.InstanceJob.newBuilder()
                    .setName("a")
                    .addRuns(dev.runlater.v1.JobRun.newBuilder().setRun(1).setTrimmed(true))
                    .addRuns(dev.runlater.v1.JobRun.newBuilder().setRun(2)))
            .build();
    var runs = WorkflowClient.instance(message).jobs().get(0).runs();
    assertTrue(runs.get(0).trimmed());
    assertEquals(2, runs.get(1).run());
    assertEquals(false, runs.get(1).trimmed());
  }
}
