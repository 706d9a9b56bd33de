package dev.runlater;

import dev.runlater.v1.CountJobsRequest;
import dev.runlater.v1.DeleteJobsRequest;
import dev.runlater.v1.RetryFailedJobsRequest;
import dev.runlater.v1.ScanJobsRequest;
import dev.runlater.v1.ScanJobsResponse;

/** Builds the requests of the calls that select a queue's jobs by filter (scan, count, ...). */
final class JobQueries {
  private JobQueries() {}

  static ScanJobsRequest scan(JobFilter filter, ScanOptions options) {
    ScanJobsRequest.Builder req =
        ScanJobsRequest.newBuilder()
            .setQueue(filter.queue())
            .setState(ProtoConvert.jobState(filter.state()))
            .setPriority(filter.priority())
            .setBodyRegex(filter.bodyRegex())
            .setLimit(options.pageSize())
            .setPageToken(options.pageToken())
            .setIncludeBody(options.includeBody());
    if (filter.future() != null) {
      req.setFuture(filter.future());
    }
    return req.build();
  }

  static JobPage page(ScanJobsResponse resp) {
    return new JobPage(
        resp.getJobsList().stream().map(ProtoConvert::job).toList(), resp.getNextPageToken());
  }

  static CountJobsRequest count(JobFilter filter) {
    CountJobsRequest.Builder req =
        CountJobsRequest.newBuilder()
            .setQueue(filter.queue())
            .setState(ProtoConvert.jobState(filter.state()))
            .setPriority(filter.priority())
            .setBodyRegex(filter.bodyRegex());
    if (filter.future() != null) {
      req.setFuture(filter.future());
    }
    return req.build();
  }

  static RetryFailedJobsRequest retryFailed(String queue, RetryFailedOptions options) {
    RetryFailedJobsRequest.Builder req =
        RetryFailedJobsRequest.newBuilder()
            .setQueue(queue)
            .setPriority(options.priority())
            .setAttemptsAllowed(options.attemptsAllowed())
            .setLimit(options.limit());
    if (options.runAfter() != null) {
      req.setRunAfter(ProtoConvert.timestamp(options.runAfter()));
    }
    return req.build();
  }

  /** Refuses, before any call, the filters the server would refuse or that would wipe a queue. */
  static DeleteJobsRequest delete(JobFilter filter, int limit) {
    if (filter.state() == null) {
      throw new IllegalArgumentException("filter: deleteJobs needs a state in its filter");
    }
    if (filter.future() != null) {
      throw new IllegalArgumentException("filter: deleteJobs cannot filter on future");
    }
    Args.requireNotNegative("limit", limit);
    return DeleteJobsRequest.newBuilder()
        .setQueue(filter.queue())
        .setState(ProtoConvert.jobState(filter.state()))
        .setPriority(filter.priority())
        .setBodyRegex(filter.bodyRegex())
        .setLimit(limit)
        .build();
  }
}
