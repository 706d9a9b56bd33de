package dev.runlater;

import static dev.runlater.ProtoConvert.instant;

import com.google.protobuf.ByteString;
import dev.runlater.v1.ApplyWorkflowRequest;
import dev.runlater.v1.ApplyWorkflowResponse;
import dev.runlater.v1.CancelInstanceRequest;
import dev.runlater.v1.CatchUp;
import dev.runlater.v1.CloseInstanceRequest;
import dev.runlater.v1.CreateScheduleRequest;
import dev.runlater.v1.DeleteScheduleRequest;
import dev.runlater.v1.DisableJobRequest;
import dev.runlater.v1.EnableJobRequest;
import dev.runlater.v1.FailurePolicy;
import dev.runlater.v1.GetInstanceRequest;
import dev.runlater.v1.GetScheduleRequest;
import dev.runlater.v1.InstanceState;
import dev.runlater.v1.ListInstancesRequest;
import dev.runlater.v1.ListSchedulesRequest;
import dev.runlater.v1.PauseScheduleRequest;
import dev.runlater.v1.PostEventRequest;
import dev.runlater.v1.RerunJobRequest;
import dev.runlater.v1.ResumeScheduleRequest;
import dev.runlater.v1.ScheduleServiceGrpc;
import dev.runlater.v1.StartInstanceRequest;
import dev.runlater.v1.UpdateScheduleRequest;
import dev.runlater.v1.WorkflowJob;
import dev.runlater.v1.WorkflowServiceGrpc;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * Workflows and schedules (docs/workflows.md), from {@link RunlaterClient#workflows()}: apply a
 * {@link Workflow}, start, feed, steer and read its instances, wait for one to end, and make
 * schedules. Errors as the rest of the client: {@link RunlaterException} and its families.
 */
public final class WorkflowClient {
  private static final Duration MAX_WAIT = Duration.ofDays(1);
  private static final Duration MIN_POLL = Duration.ofMillis(10);

  private final WorkflowServiceGrpc.WorkflowServiceBlockingStub workflows;
  private final ScheduleServiceGrpc.ScheduleServiceBlockingStub schedules;
  private final String target;
  private final Duration deadline;

  private WorkflowClient(
      WorkflowServiceGrpc.WorkflowServiceBlockingStub workflows,
      ScheduleServiceGrpc.ScheduleServiceBlockingStub schedules,
      String target,
      Duration deadline) {
    this.workflows = workflows;
    this.schedules = schedules;
    this.target = target;
    this.deadline = deadline;
  }

  /** Over {@code channel}, as {@link RunlaterClient} makes it (its credentials, its deadline). */
  static WorkflowClient over(
      io.grpc.Channel channel, io.grpc.CallCredentials creds, String target, Duration deadline) {
    return new WorkflowClient(
        WorkflowServiceGrpc.newBlockingStub(channel).withCallCredentials(creds),
        ScheduleServiceGrpc.newBlockingStub(channel).withCallCredentials(creds),
        target,
        deadline);
  }

  /** What {@link #apply} did: the version in force, and whether this call made it. */
  public record Applied(int version, boolean created) {}

  /** Defines a workflow or changes it (a new version when the definition differs). */
  public Applied apply(Workflow workflow) {
    dev.runlater.v1.Workflow.Builder w =
        dev.runlater.v1.Workflow.newBuilder().setName(workflow.name());
    for (Workflow.Job j : workflow.jobs()) {
      WorkflowJob.Builder job =
          w.addJobsBuilder()
              .setName(j.name)
              .setQueue(j.queue)
              .setOnFailure(
                  j.continueOnFailure
                      ? FailurePolicy.FAILURE_POLICY_CONTINUE
                      : FailurePolicy.FAILURE_POLICY_ABORT)
              .setBody(ByteString.copyFrom(j.body))
              .setPriority(j.priority)
              .setAttemptsAllowed(j.attemptsAllowed);
      for (Workflow.Input i : j.inputs) {
        if (i.external() != null) {
          job.addInputsBuilder().setExternal(i.external());
        } else {
          job.addInputsBuilder().setJob(i.job()).setSeed(i.seed());
        }
      }
    }
    ApplyWorkflowResponse resp =
        call(() -> stub().applyWorkflow(ApplyWorkflowRequest.newBuilder().setWorkflow(w).build()));
    return new Applied(resp.getWorkflow().getVersion(), resp.getCreated());
  }

  /**
   * Starts an instance of the workflow's latest version, posting {@code events} to its external
   * inputs; {@code keepOpen}: it ends only when closed or cancelled.
   */
  public Instance start(String workflow, List<ExternalEvent> events, boolean keepOpen) {
    StartInstanceRequest.Builder req =
        StartInstanceRequest.newBuilder().setWorkflow(workflow).setKeepOpen(keepOpen);
    events.forEach(e -> req.addEvents(event(e)));
    return instance(call(() -> stub().startInstance(req.build())).getInstance());
  }

  /** Starts an instance with no events. */
  public Instance start(String workflow) {
    return start(workflow, List.of(), false);
  }

  /** Posts an event to an external input of a running instance; the instance after. */
  public Instance postEvent(String instanceId, ExternalEvent event) {
    var req =
        PostEventRequest.newBuilder().setInstanceId(instanceId).setEvent(event(event)).build();
    return instance(call(() -> stub().postEvent(req)).getInstance());
  }

  /** The instance with every job's state and runs; NotFoundException if there is none. */
  public Instance getInstance(String instanceId) {
    var req = GetInstanceRequest.newBuilder().setInstanceId(instanceId).build();
    return instance(call(() -> stub().getInstance(req)).getInstance());
  }

  /**
   * Polls {@link #getInstance} every {@code pollInterval} until the instance has ended and returns
   * it; throws {@link DeadlineExceededException} if it still runs after {@code timeout} (at most a
   * day).
   */
  public Instance waitForInstance(String instanceId, Duration timeout, Duration pollInterval)
      throws InterruptedException {
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(pollInterval, "pollInterval");
    if (timeout.isNegative() || timeout.compareTo(MAX_WAIT) > 0) {
      throw new IllegalArgumentException("timeout " + timeout + ": 0 to 1 day");
    }
    if (pollInterval.compareTo(MIN_POLL) < 0 || pollInterval.compareTo(MAX_WAIT) > 0) {
      throw new IllegalArgumentException("pollInterval " + pollInterval + ": 10 ms to 1 day");
    }
    long giveUpAt = System.nanoTime() + timeout.toNanos();
    for (; ; ) {
      Instance instance = getInstance(instanceId);
      if (instance.ended()) {
        return instance;
      }
      long left = giveUpAt - System.nanoTime();
      if (left <= 0) {
        throw new DeadlineExceededException(
            Status.Code.DEADLINE_EXCEEDED,
            ErrorReason.UNSPECIFIED,
            "",
            "instance "
                + instanceId
                + " still "
                + instance.state()
                + " after "
                + timeout.toMillis()
                + " ms",
            null);
      }
      Thread.sleep(Math.max(1, Math.min(pollInterval.toMillis(), left / 1_000_000)));
    }
  }

  /** Posts the events that triggered run {@code run} of {@code job} again to its inputs. */
  public Instance rerunJob(String instanceId, String job, int run) {
    var req =
        RerunJobRequest.newBuilder().setInstanceId(instanceId).setJob(job).setRun(run).build();
    return instance(call(() -> stub().rerunJob(req)).getInstance());
  }

  /** Stops {@code job} of the instance from running; its events still gather. */
  public Instance disableJob(String instanceId, String job) {
    var req = DisableJobRequest.newBuilder().setInstanceId(instanceId).setJob(job).build();
    return instance(call(() -> stub().disableJob(req)).getInstance());
  }

  /** Lets a disabled job run again. */
  public Instance enableJob(String instanceId, String job) {
    var req = EnableJobRequest.newBuilder().setInstanceId(instanceId).setJob(job).build();
    return instance(call(() -> stub().enableJob(req)).getInstance());
  }

  /** Lets a keep-open instance end once nothing is runnable or running. */
  public Instance close(String instanceId) {
    var req = CloseInstanceRequest.newBuilder().setInstanceId(instanceId).build();
    return instance(call(() -> stub().closeInstance(req)).getInstance());
  }

  /** Ends a running instance (CANCELLED); its pending queue jobs are deleted. */
  public Instance cancel(String instanceId) {
    var req = CancelInstanceRequest.newBuilder().setInstanceId(instanceId).build();
    return instance(call(() -> stub().cancelInstance(req)).getInstance());
  }

  /**
   * Instances, newest first, without their jobs ({@link #getInstance} has them), of {@code
   * workflow} (null: every workflow's) in {@code state} (null: any), fetched {@code pageSize} at a
   * time (1 to 1,000; 0: the server's 100) as the loop reaches them. IllegalArgumentException at
   * once for another page size.
   */
  public Listing<Instance> listInstances(String workflow, Instance.State state, int pageSize) {
    int limit = Listing.checkPageSize(pageSize);
    var base = ListInstancesRequest.newBuilder().setLimit(limit);
    if (workflow != null) {
      base.setWorkflow(workflow);
    }
    if (state != null) {
      base.setState(InstanceState.forNumber(state.ordinal()));
    }
    return new Listing<>(
        token -> {
          var req = base.clone().setPageToken(token).build();
          var page = call(() -> stub().listInstances(req));
          return new Listing.Page<>(
              page.getInstancesList().stream().map(WorkflowClient::instance).toList(),
              page.getNextPageToken());
        });
  }

  /** Every instance, newest first, in pages of the server's default size. */
  public Listing<Instance> listInstances() {
    return listInstances(null, null, 0);
  }

  /** What {@link #createSchedule} did: the schedule, and whether this call created it. */
  public record CreatedSchedule(Schedule schedule, boolean created) {}

  /** Creates a schedule; one of that name that exists is returned unchanged (created false). */
  public CreatedSchedule createSchedule(Schedule.Spec spec) {
    var req =
        CreateScheduleRequest.newBuilder()
            .setSchedule(scheduleMessage(spec))
            .setPaused(spec.paused)
            .build();
    var resp = call(() -> scheduleStub().createSchedule(req));
    return new CreatedSchedule(schedule(resp.getSchedule()), resp.getCreated());
  }

  /**
   * Replaces the definition of the schedule {@code spec} names (what it leaves out goes back to its
   * default; {@link Schedule.Spec#paused} is ignored: paused stays as it is). A new cron or time
   * zone counts from now. NotFoundException if there is none.
   */
  public Schedule updateSchedule(Schedule.Spec spec) {
    var req = UpdateScheduleRequest.newBuilder().setSchedule(scheduleMessage(spec)).build();
    return schedule(call(() -> scheduleStub().updateSchedule(req)).getSchedule());
  }

  /** Stops a schedule from firing; times that pass meanwhile are not caught up. Idempotent. */
  public Schedule pauseSchedule(String name) {
    var req = PauseScheduleRequest.newBuilder().setName(name).build();
    return schedule(call(() -> scheduleStub().pauseSchedule(req)).getSchedule());
  }

  /** Lets a paused schedule fire again, from the first time after now. Idempotent. */
  public Schedule resumeSchedule(String name) {
    var req = ResumeScheduleRequest.newBuilder().setName(name).build();
    return schedule(call(() -> scheduleStub().resumeSchedule(req)).getSchedule());
  }

  /**
   * Every schedule, by name, fetched {@code pageSize} at a time (1 to 1,000; 0: the server's 100)
   * as the loop reaches them; IllegalArgumentException at once for another size.
   */
  public Listing<Schedule> listSchedules(int pageSize) {
    int limit = Listing.checkPageSize(pageSize);
    return new Listing<>(
        token -> {
          var req = ListSchedulesRequest.newBuilder().setLimit(limit).setPageToken(token).build();
          var page = call(() -> scheduleStub().listSchedules(req));
          return new Listing.Page<>(
              page.getSchedulesList().stream().map(WorkflowClient::schedule).toList(),
              page.getNextPageToken());
        });
  }

  /** Every schedule, by name, in pages of the server's default size. */
  public Listing<Schedule> listSchedules() {
    return listSchedules(0);
  }

  /** A schedule with its latest fires; NotFoundException if there is none. */
  public Schedule getSchedule(String name) {
    var req = GetScheduleRequest.newBuilder().setName(name).build();
    return schedule(call(() -> scheduleStub().getSchedule(req)).getSchedule());
  }

  /** Deletes a schedule; false if there was none. */
  public boolean deleteSchedule(String name) {
    var req = DeleteScheduleRequest.newBuilder().setName(name).build();
    return call(() -> scheduleStub().deleteSchedule(req)).getDeleted();
  }

  // ------------------------------------------------------------ conversions

  private static dev.runlater.v1.Schedule scheduleMessage(Schedule.Spec spec) {
    dev.runlater.v1.Schedule.Builder s =
        dev.runlater.v1.Schedule.newBuilder()
            .setName(spec.name)
            .setCron(spec.cron)
            .setTimeZone(spec.timeZone)
            .setOverlapValue(spec.overlap.ordinal());
    if (spec.workflow != null) {
      var t = s.getWorkflowBuilder().setWorkflow(spec.workflow).setKeepOpen(spec.keepOpen);
      spec.events.forEach(e -> t.addEvents(event(e)));
    } else {
      s.getJobBuilder().setQueue(spec.queue).setBody(ByteString.copyFrom(spec.body));
    }
    if (spec.catchUpWindow != null) {
      s.setCatchUp(CatchUp.CATCH_UP_LATEST)
          .setCatchUpWindow(ProtoConvert.duration(spec.catchUpWindow));
    }
    return s.build();
  }

  private static dev.runlater.v1.ExternalEvent event(ExternalEvent e) {
    return dev.runlater.v1.ExternalEvent.newBuilder()
        .setInput(e.input())
        .setCustomStatus(e.customStatus())
        .setResult(ByteString.copyFrom(e.result()))
        .build();
  }

  static WorkflowEvent event(dev.runlater.v1.WorkflowEvent e) {
    return new WorkflowEvent(
        e.getEventId(),
        e.getInput(),
        e.getFromJob(),
        e.getFromRun(),
        e.getCustomStatus(),
        e.getResult().toByteArray(),
        instant(e.hasPostedAt(), e.getPostedAt()));
  }

  private static List<WorkflowEvent> events(List<dev.runlater.v1.WorkflowEvent> es) {
    return es.stream().map(WorkflowClient::event).toList();
  }

  static WorkflowContext context(dev.runlater.v1.WorkflowContext c) {
    return new WorkflowContext(
        c.getWorkflow(),
        c.getVersion(),
        c.getInstanceId(),
        c.getJob(),
        c.getRun(),
        events(c.getTriggeredByList()));
  }

  private static <E extends Enum<E>> E named(Class<E> type, int value) {
    E[] all = type.getEnumConstants();
    return value >= 0 && value < all.length ? all[value] : all[0];
  }

  static Instance instance(dev.runlater.v1.Instance i) {
    return new Instance(
        i.getInstanceId(),
        i.getWorkflow(),
        i.getVersion(),
        named(Instance.State.class, i.getStateValue()),
        i.getKeepOpen(),
        instant(i.hasCreatedAt(), i.getCreatedAt()),
        instant(i.hasEndedAt(), i.getEndedAt()),
        i.getJobsList().stream()
            .map(
                j ->
                    new Instance.Job(
                        j.getName(),
                        named(Instance.JobState.class, j.getStateValue()),
                        events(j.getPendingEventsList()),
                        j.getRunsList().stream()
                            .map(
                                r ->
                                    new Instance.Run(
                                        r.getRun(),
                                        r.getJobId(),
                                        events(r.getTriggeredByList()),
                                        named(Instance.Outcome.class, r.getOutcomeValue()),
                                        r.getCustomStatus(),
                                        r.getResult().toByteArray(),
                                        instant(r.hasQueuedAt(), r.getQueuedAt()),
                                        instant(r.hasEndedAt(), r.getEndedAt()),
                                        r.getTrimmed()))
                            .toList(),
                        j.getRunCount(),
                        j.getDroppedEvents()))
            .toList());
  }

  private static Schedule schedule(dev.runlater.v1.Schedule s) {
    return new Schedule(
        s.getName(),
        s.getCron(),
        s.getTimeZone(),
        named(Schedule.Overlap.class, s.getOverlapValue()),
        s.getPaused(),
        instant(s.hasNextFireAt(), s.getNextFireAt()),
        s.getLastStarted(),
        s.getFires(),
        s.getHistoryList().stream()
            .map(
                f ->
                    new Schedule.Fire(
                        named(Schedule.FireOutcome.class, f.getOutcomeValue()),
                        instant(f.hasAt(), f.getAt()),
                        instant(f.hasThrough(), f.getThrough()),
                        instant(f.hasFiredAt(), f.getFiredAt()),
                        f.getStarted(),
                        f.getPrevious(),
                        f.getError()))
            .toList());
  }

  private WorkflowServiceGrpc.WorkflowServiceBlockingStub stub() {
    return RunlaterClient.withDeadline(workflows, deadline);
  }

  private ScheduleServiceGrpc.ScheduleServiceBlockingStub scheduleStub() {
    return RunlaterClient.withDeadline(schedules, deadline);
  }

  private <T> T call(Supplier<T> rpc) {
    try {
      return rpc.get();
    } catch (StatusRuntimeException e) {
      throw Errors.from(e, target);
    }
  }
}
