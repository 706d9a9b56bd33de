package dev.runlater;

import java.util.List;

/**
 * One page of {@link RunlaterClient#scanJobs}.
 *
 * @param jobs matching jobs, newest run_after first
 * @param nextPageToken pass to the next call for the next page; empty when there is none
 */
public record JobPage(List<Job> jobs, String nextPageToken) {

  /** True when another page follows. */
  public boolean hasNextPage() {
    return !nextPageToken.isEmpty();
  }
}
