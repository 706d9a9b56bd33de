package dev.runlater;

import com.google.protobuf.ByteString;
import com.google.protobuf.Timestamp;
import dev.runlater.v1.AckRequest;
import dev.runlater.v1.CheckpointRequest;
import dev.runlater.v1.DequeueRequest;
import dev.runlater.v1.DequeueResponse;
import dev.runlater.v1.EnqueueRequest;
import dev.runlater.v1.GetJobsRequest;
import dev.runlater.v1.GetJobsResponse;
import dev.runlater.v1.JobCheckpoint;
import dev.runlater.v1.JobFailure;
import dev.runlater.v1.JobSuccess;
import dev.runlater.v1.Outcome;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Converts between the generated runlater.v1 messages and the SDK's records. Enum mappings are
 * switch expressions with no default, so a value added to the proto fails this file's compilation
 * instead of drifting silently.
 */
final class ProtoConvert {
  private ProtoConvert() {}

  // ---- time ----

  static Timestamp timestamp(Instant t) {
    return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
  }

  /** Null when the field is unset, so records show "no value" rather than the epoch. */
  static Instant instant(boolean has, Timestamp t) {
    return has ? Instant.ofEpochSecond(t.getSeconds(), t.getNanos()) : null;
  }

  static com.google.protobuf.Duration duration(Duration d) {
    return com.google.protobuf.Duration.newBuilder()
        .setSeconds(d.getSeconds())
        .setNanos(d.getNano())
        .build();
  }

  static Duration duration(com.google.protobuf.Duration d) {
    return Duration.ofSeconds(d.getSeconds(), d.getNanos());
  }

  // ---- enums ----

  static dev.runlater.v1.JobState jobState(JobState s) {
    if (s == null) {
      return dev.runlater.v1.JobState.JOB_STATE_UNSPECIFIED;
    }
    return switch (s) {
      case PENDING -> dev.runlater.v1.JobState.JOB_STATE_PENDING;
      case RUNNING -> dev.runlater.v1.JobState.JOB_STATE_RUNNING;
      case SUCCEEDED -> dev.runlater.v1.JobState.JOB_STATE_SUCCEEDED;
      case FAILED -> dev.runlater.v1.JobState.JOB_STATE_FAILED;
    };
  }

  static JobState jobState(dev.runlater.v1.JobState s) {
    return switch (s) {
      case JOB_STATE_PENDING -> JobState.PENDING;
      case JOB_STATE_RUNNING -> JobState.RUNNING;
      case JOB_STATE_SUCCEEDED -> JobState.SUCCEEDED;
      case JOB_STATE_FAILED -> JobState.FAILED;
      case JOB_STATE_UNSPECIFIED, UNRECOGNIZED ->
          throw new IllegalStateException("server sent job state " + s);
    };
  }

  static AckOutcome outcome(Outcome o) {
    return switch (o) {
      case OUTCOME_ACKNOWLEDGED -> AckOutcome.ACKNOWLEDGED;
      case OUTCOME_STALE_CLAIM -> AckOutcome.STALE_CLAIM;
      case OUTCOME_NOT_FOUND -> AckOutcome.NOT_FOUND;
      case OUTCOME_UNSPECIFIED, UNRECOGNIZED ->
          throw new IllegalStateException("server sent outcome " + o);
    };
  }

  static ErrorReason reason(dev.runlater.v1.ErrorReason r) {
    return switch (r) {
      case ERROR_REASON_UNSPECIFIED, UNRECOGNIZED -> ErrorReason.UNSPECIFIED;
      case ERROR_REASON_QUEUE_NOT_FOUND -> ErrorReason.QUEUE_NOT_FOUND;
      case ERROR_REASON_INVALID_QUEUE_NAME -> ErrorReason.INVALID_QUEUE_NAME;
      case ERROR_REASON_INVALID_PRIORITY -> ErrorReason.INVALID_PRIORITY;
      case ERROR_REASON_BODY_TOO_LARGE -> ErrorReason.BODY_TOO_LARGE;
      case ERROR_REASON_BATCH_TOO_LARGE -> ErrorReason.BATCH_TOO_LARGE;
      case ERROR_REASON_INVALID_ARGUMENT -> ErrorReason.INVALID_ARGUMENT;
      case ERROR_REASON_SHUTTING_DOWN -> ErrorReason.SHUTTING_DOWN;
      case ERROR_REASON_NO_BROKER -> ErrorReason.NO_BROKER;
      case ERROR_REASON_WORKFLOW_NOT_FOUND -> ErrorReason.WORKFLOW_NOT_FOUND;
      case ERROR_REASON_INSTANCE_NOT_FOUND -> ErrorReason.INSTANCE_NOT_FOUND;
      case ERROR_REASON_WORKFLOW_RULE -> ErrorReason.WORKFLOW_RULE;
      case ERROR_REASON_CONFLICT -> ErrorReason.CONFLICT;
      case ERROR_REASON_UNSUPPORTED -> ErrorReason.UNSUPPORTED;
      case ERROR_REASON_UNAUTHENTICATED -> ErrorReason.UNAUTHENTICATED;
      case ERROR_REASON_PERMISSION_DENIED -> ErrorReason.PERMISSION_DENIED;
    };
  }

  // ---- jobs ----

  static dev.runlater.v1.JobSpec jobSpec(JobSpec s, String activeTraceparent) {
    dev.runlater.v1.JobSpec.Builder b =
        dev.runlater.v1.JobSpec.newBuilder()
            .setQueue(s.queue())
            .setBody(ByteString.copyFrom(s.body()))
            .setPriority(s.priority())
            .setAttemptsAllowed(s.attemptsAllowed())
            .setIdempotencyKey(s.idempotencyKey())
            .setCustomStatus(s.customStatus())
            .setOrderingKey(s.orderingKey())
            .setTraceparent(s.traceparent() == null ? activeTraceparent : s.traceparent());
    if (s.runAfter() != null) {
      b.setRunAfter(timestamp(s.runAfter()));
    }
    return b.build();
  }

  static Job job(dev.runlater.v1.Job j) {
    return new Job(
        j.getJobId(),
        j.getQueue(),
        jobState(j.getState()),
        j.getPriority(),
        j.getBody().toByteArray(),
        instant(j.hasRunAfter(), j.getRunAfter()),
        j.getAttemptsAllowed(),
        j.getAttemptsRemaining(),
        j.getCustomStatus(),
        instant(j.hasCreatedAt(), j.getCreatedAt()),
        instant(j.hasUpdatedAt(), j.getUpdatedAt()),
        instant(j.hasClaimExpiresAt(), j.getClaimExpiresAt()),
        instant(j.hasFinishedAt(), j.getFinishedAt()),
        j.getOrderingKey(),
        j.getTraceparent());
  }

  static DequeuedJob dequeuedJob(String queue, dev.runlater.v1.DequeuedJob j) {
    return new DequeuedJob(
        queue,
        j.getJobId(),
        j.getBody().toByteArray(),
        j.getPriority(),
        j.getAttempt(),
        j.getAttemptsAllowed(),
        j.getClaimToken(),
        instant(j.hasClaimExpiresAt(), j.getClaimExpiresAt()),
        instant(j.hasCreatedAt(), j.getCreatedAt()),
        j.getCustomStatus(),
        j.hasWorkflow() ? WorkflowClient.context(j.getWorkflow()) : null,
        j.getTraceparent());
  }

  static List<JobOutcome> outcomes(List<dev.runlater.v1.JobOutcome> results) {
    List<JobOutcome> out = new ArrayList<>(results.size());
    for (dev.runlater.v1.JobOutcome r : results) {
      out.add(new JobOutcome(r.getJobId(), outcome(r.getOutcome())));
    }
    return out;
  }

  /**
   * Successes first, then failures: the server answers in that order, so callers that keep the
   * request order of {@code acks} should expect outcomes regrouped this way.
   */
  static AckRequest ackRequest(String queue, List<Ack> acks) {
    AckRequest.Builder b = AckRequest.newBuilder().setQueue(queue);
    for (Ack a : acks) {
      if (a.succeeded()) {
        b.addSucceeded(
            JobSuccess.newBuilder()
                .setJobId(a.jobId())
                .setClaimToken(a.claimToken())
                .setCustomStatus(a.customStatus())
                .setResult(com.google.protobuf.ByteString.copyFrom(a.result()))
                .setNoEvents(a.noEvents()));
      } else {
        JobFailure.Builder f =
            JobFailure.newBuilder()
                .setJobId(a.jobId())
                .setClaimToken(a.claimToken())
                .setCustomStatus(a.customStatus())
                .setNoRetry(a.noRetry());
        if (a.retryDelay() != null) {
          f.setRetryDelay(duration(a.retryDelay()));
        }
        b.addFailed(f);
      }
    }
    return b.build();
  }

  static CheckpointRequest checkpointRequest(String queue, List<Checkpoint> checkpoints) {
    CheckpointRequest.Builder req = CheckpointRequest.newBuilder().setQueue(queue);
    for (Checkpoint c : checkpoints) {
      req.addCheckpoints(checkpoint(c));
    }
    return req.build();
  }

  static JobCheckpoint checkpoint(Checkpoint c) {
    JobCheckpoint.Builder b =
        JobCheckpoint.newBuilder()
            .setJobId(c.jobId())
            .setClaimToken(c.claimToken())
            .setMoveToPending(c.moveToPending())
            .setAttemptsAllowed(c.attemptsAllowed())
            .setCustomStatus(c.customStatus());
    if (c.extendClaimBy() != null) {
      b.setExtendClaimBy(duration(c.extendClaimBy()));
    }
    if (c.newBody() != null) {
      b.setNewBody(ByteString.copyFrom(c.newBody()));
    }
    if (c.runAfter() != null) {
      b.setRunAfter(timestamp(c.runAfter()));
    }
    return b.build();
  }

  // ---- requests and answers shared by the blocking and the async client ----

  /**
   * The request, with the caller's active span as the traceparent of every job that names none of
   * its own: call it on the caller's thread (the async client does).
   */
  static EnqueueRequest enqueueRequest(List<JobSpec> specs) {
    EnqueueRequest.Builder req = EnqueueRequest.newBuilder();
    String active = TraceContext.activeTraceparent();
    for (JobSpec s : specs) {
      req.addJobs(jobSpec(s, active));
    }
    return req.build();
  }

  static GetJobsRequest getJobsRequest(List<String> jobIds, boolean includeBody) {
    return GetJobsRequest.newBuilder().addAllJobIds(jobIds).setIncludeBody(includeBody).build();
  }

  static List<Job> jobs(GetJobsResponse resp) {
    return resp.getJobsList().stream().map(ProtoConvert::job).toList();
  }

  static DequeueRequest dequeueRequest(String queue, DequeueOptions options) {
    DequeueRequest.Builder req =
        DequeueRequest.newBuilder()
            .setQueue(queue)
            .setLimit(options.limit())
            .setWorkerId(options.workerId());
    if (!options.maxWait().isZero()) {
      req.setWait(duration(options.maxWait()));
    }
    if (!options.acks().isEmpty()) {
      // The piggy-backed ack may leave its queue empty: the request's queue is used.
      req.setAck(ackRequest("", options.acks()));
    }
    return req.build();
  }

  /** A long-polling Dequeue's deadline: the default one plus the wait. */
  static Duration dequeueDeadline(Duration defaultDeadline, Duration wait) {
    return wait == null ? defaultDeadline : defaultDeadline.plus(wait);
  }

  static DequeueResult dequeueResult(String queue, DequeueResponse resp) {
    List<DequeuedJob> jobs = resp.getJobsList().stream().map(j -> dequeuedJob(queue, j)).toList();
    return new DequeueResult(jobs, outcomes(resp.getAck().getResultsList()));
  }

  // ---- queues ----

  /** The proto config and, alongside, the field-mask paths of the fields that were set. */
  static dev.runlater.v1.QueueConfig queueConfig(QueueConfig c, List<String> setPaths) {
    dev.runlater.v1.QueueConfig.Builder b = dev.runlater.v1.QueueConfig.newBuilder();
    if (c.priorities() != null) {
      b.setPriorities(c.priorities());
      setPaths.add("priorities");
    }
    if (c.claimTimeout() != null) {
      b.setClaimTimeout(duration(c.claimTimeout()));
      setPaths.add("claim_timeout");
    }
    if (c.retryPolicy() != null) {
      QueueRetryPolicy p = c.retryPolicy();
      dev.runlater.v1.RetryPolicy.Builder rp =
          dev.runlater.v1.RetryPolicy.newBuilder().setLinearSteps(p.linearSteps());
      if (p.initialDelay() != null) {
        rp.setInitialDelay(duration(p.initialDelay()));
      }
      if (p.maxDelay() != null) {
        rp.setMaxDelay(duration(p.maxDelay()));
      }
      b.setRetryPolicy(rp);
      setPaths.add("retry_policy");
    }
    if (c.defaultAttemptsAllowed() != null) {
      b.setDefaultAttemptsAllowed(c.defaultAttemptsAllowed());
      setPaths.add("default_attempts_allowed");
    }
    if (c.maxDequeuePerSecond() != null) {
      b.setMaxDequeuePerSecond(c.maxDequeuePerSecond());
      setPaths.add("max_dequeue_per_second");
    }
    if (c.paused() != null) {
      b.setPaused(c.paused());
      setPaths.add("paused");
    }
    if (c.succeededRetention() != null) {
      b.setSucceededRetention(duration(c.succeededRetention()));
      setPaths.add("succeeded_retention");
    }
    if (c.failedRetention() != null) {
      b.setFailedRetention(duration(c.failedRetention()));
      setPaths.add("failed_retention");
    }
    if (c.fifo() != null) {
      b.setFifo(c.fifo());
      setPaths.add("fifo");
    }
    if (c.partitions() != null) {
      b.setPartitions(c.partitions());
      setPaths.add("partitions");
    }
    if (c.maxBodyBytes() != null) {
      b.setMaxBodyBytes(c.maxBodyBytes());
      setPaths.add("max_body_bytes");
    }
    return b.build();
  }

  static QueueConfig queueConfig(dev.runlater.v1.QueueConfig c) {
    dev.runlater.v1.RetryPolicy rp = c.getRetryPolicy();
    return new QueueConfig(
        c.getPriorities(),
        duration(c.getClaimTimeout()),
        new QueueRetryPolicy(
            duration(rp.getInitialDelay()), rp.getLinearSteps(), duration(rp.getMaxDelay())),
        c.getDefaultAttemptsAllowed(),
        c.getMaxDequeuePerSecond(),
        c.getPaused(),
        duration(c.getSucceededRetention()),
        duration(c.getFailedRetention()),
        c.getFifo(),
        c.getPartitions(),
        c.getMaxBodyBytes());
  }

  static Queue queue(dev.runlater.v1.Queue q) {
    dev.runlater.v1.QueueStats s = q.getStats();
    return new Queue(
        q.getName(),
        queueConfig(q.getConfig()),
        new QueueStats(
            s.getPending(),
            s.getScheduled(),
            s.getRunning(),
            s.getSucceeded(),
            s.getFailed(),
            duration(s.getOldestPendingAge())));
  }
}
