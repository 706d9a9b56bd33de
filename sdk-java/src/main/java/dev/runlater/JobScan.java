package dev.runlater;

import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Every job a scan matches, page after page, from {@link RunlaterClient#scanAllJobs}. Lazy: a page
 * is fetched only when the one before is used up, so a loop that stops early, or a {@code
 * stream().limit(n)}, asks for no more pages than it reads. Each {@link #iterator()} (and each
 * {@link #stream()}) starts a new scan from the first page. A failed page throws the client's
 * {@link RunlaterException} from {@code hasNext()}.
 *
 * <pre>{@code
 * for (Job job : client.scanAllJobs(JobFilter.queue("emails").withState(JobState.FAILED))) {
 *   System.out.println(job.jobId() + " " + job.customStatus());
 * }
 * }</pre>
 */
public final class JobScan implements Iterable<Job> {
  private final ScanOptions options;
  private final Function<ScanOptions, JobPage> fetch;

  JobScan(ScanOptions options, Function<ScanOptions, JobPage> fetch) {
    this.options = options;
    this.fetch = fetch;
  }

  /** A new scan from the first page. */
  @Override
  public Iterator<Job> iterator() {
    return new Pages();
  }

  /** The jobs as a sequential, ordered stream; pages are fetched as the stream is consumed. */
  public Stream<Job> stream() {
    return StreamSupport.stream(
        Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL),
        false);
  }

  /** Walks the pages, following each page's token until one comes back without a token. */
  private final class Pages implements Iterator<Job> {
    private Iterator<Job> page = Collections.emptyIterator();
    private String nextToken = options.pageToken();
    private boolean fetchedAny;

    @Override
    public boolean hasNext() {
      // A page may come back empty with a token (filtered jobs skipped): keep following it.
      while (!page.hasNext() && (!fetchedAny || !nextToken.isEmpty())) {
        JobPage next = fetch.apply(options.from(nextToken));
        fetchedAny = true;
        nextToken = next.nextPageToken();
        page = next.jobs().iterator();
      }
      return page.hasNext();
    }

    @Override
    public Job next() {
      if (!hasNext()) {
        throw new NoSuchElementException("no more jobs in this scan");
      }
      return page.next();
    }
  }
}
