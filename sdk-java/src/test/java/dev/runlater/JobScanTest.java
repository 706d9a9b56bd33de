package dev.runlater;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.MethodDescriptor;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** {@link RunlaterClient#scanAllJobs}: every page, fetched lazily, restartable. */
class JobScanTest extends ServerTest {

  /** Counts the ScanJobs calls a client makes. */
  private record ScanCounter(AtomicInteger scans) implements ClientInterceptor {
    @Override
    public <Q, R> ClientCall<Q, R> interceptCall(
        MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
      if (method.getBareMethodName().equals("ScanJobs")) {
        scans.incrementAndGet();
      }
      return next.newCall(method, options);
    }
  }

  /** Five jobs, run_after one second apart: a scan returns them newest first. */
  private static List<String> fiveJobs(String q) {
    Instant base = Instant.now().minusSeconds(100);
    List<JobSpec> specs = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      specs.add(JobSpec.of(q, "job-" + i).withRunAfter(base.plusSeconds(i)));
    }
    List<String> ids = new ArrayList<>(client.enqueue(specs));
    Collections.reverse(ids);
    return ids;
  }

  private static ScanOptions pagesOfTwo() {
    return ScanOptions.builder().pageSize(2).includeBody(true).build();
  }

  @Test
  void iteratesEveryPageInOrder() {
    String q = newQueue("scanall", QueueConfig.defaults());
    List<String> newestFirst = fiveJobs(q);
    AtomicInteger scans = new AtomicInteger();
    try (RunlaterClient c = TestServer.client(new ScanCounter(scans))) {
      List<String> seen = new ArrayList<>();
      for (Job job : c.scanAllJobs(JobFilter.queue(q), pagesOfTwo())) {
        seen.add(job.jobId());
      }
      assertEquals(newestFirst, seen);
      assertEquals(3, scans.get(), "pages of 2, 2 and 1");
    }
  }

  @Test
  void fetchesOnlyThePagesItReads() {
    String q = newQueue("scanlazy", QueueConfig.defaults());
    List<String> newestFirst = fiveJobs(q);
    AtomicInteger scans = new AtomicInteger();
    try (RunlaterClient c = TestServer.client(new ScanCounter(scans))) {
      JobScan scan = c.scanAllJobs(JobFilter.queue(q), pagesOfTwo());
      assertEquals(0, scans.get(), "nothing is fetched before the first read");
      List<String> firstThree = scan.stream().limit(3).map(Job::jobId).toList();
      assertEquals(newestFirst.subList(0, 3), firstThree);
      assertEquals(2, scans.get());
      assertEquals("job-4", scan.iterator().next().bodyUtf8(), "a new iterator starts over");
    }
  }

  @Test
  void startsAtTheGivenPageToken() {
    String q = newQueue("scanfrom", QueueConfig.defaults());
    List<String> newestFirst = fiveJobs(q);
    JobPage first = client.scanJobs(JobFilter.queue(q), pagesOfTwo());
    ScanOptions rest = ScanOptions.builder().pageSize(2).pageToken(first.nextPageToken()).build();
    assertEquals(
        newestFirst.subList(2, 5),
        client.scanAllJobs(JobFilter.queue(q), rest).stream().map(Job::jobId).toList());
  }

  @Test
  void anEmptyScanEndsAtOnce() {
    String q = newQueue("scanempty", QueueConfig.defaults());
    Iterator<Job> jobs = client.scanAllJobs(JobFilter.queue(q)).iterator();
    assertFalse(jobs.hasNext());
    assertThrows(NoSuchElementException.class, jobs::next);
  }

  @Test
  void aFailedPageThrowsTheClientsException() {
    JobScan scan = client.scanAllJobs(JobFilter.queue(TestServer.queueName("missing")));
    assertThrows(NotFoundException.class, () -> scan.iterator().hasNext());
  }
}
