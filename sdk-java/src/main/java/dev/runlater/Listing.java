package dev.runlater;

import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.function.Function;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Every item of a paged list call ({@link WorkflowClient#listInstances}, {@link
 * WorkflowClient#listSchedules}), page after page. Lazy: a page is fetched only when the one before
 * is used up, so a loop that stops early, or a {@code stream().limit(n)}, asks for no more pages
 * than it reads. Each {@link #iterator()} (and each {@link #stream()}) starts again from the first
 * page. A failed page throws the client's {@link RunlaterException} from {@code hasNext()}.
 *
 * @param <T> what it lists
 */
public final class Listing<T> implements Iterable<T> {
  /** The largest page the server hands out. */
  public static final int MAX_PAGE_SIZE = 1000;

  /** One page: its items and the token of the next (empty on the last). */
  record Page<T>(List<T> items, String nextPageToken) {}

  private final Function<String, Page<T>> fetch;

  Listing(Function<String, Page<T>> fetch) {
    this.fetch = fetch;
  }

  /**
   * {@code pageSize} if the server accepts it: 1 to {@link #MAX_PAGE_SIZE}, or 0 for the server's
   * default (100); an IllegalArgumentException naming the bound otherwise.
   */
  static int checkPageSize(int pageSize) {
    if (pageSize < 0 || pageSize > MAX_PAGE_SIZE) {
      throw new IllegalArgumentException(
          "pageSize " + pageSize + ": 1 to " + MAX_PAGE_SIZE + " (0: the server's default)");
    }
    return pageSize;
  }

  /** A new listing from the first page. */
  @Override
  public Iterator<T> iterator() {
    return new Pages();
  }

  /** The items as a sequential, ordered stream; pages are fetched as the stream is consumed. */
  public Stream<T> stream() {
    return StreamSupport.stream(
        Spliterators.spliteratorUnknownSize(iterator(), Spliterator.ORDERED | Spliterator.NONNULL),
        false);
  }

  /** Walks the pages, following each page's token until one comes back without a token. */
  private final class Pages implements Iterator<T> {
    private Iterator<T> page = Collections.emptyIterator();
    private String nextToken = "";
    private boolean fetchedAny;

    @Override
    public boolean hasNext() {
      while (!page.hasNext() && (!fetchedAny || !nextToken.isEmpty())) {
        Page<T> next = fetch.apply(nextToken);
        fetchedAny = true;
        nextToken = next.nextPageToken();
        page = next.items().iterator();
      }
      return page.hasNext();
    }

    @Override
    public T next() {
      if (!hasNext()) {
        throw new NoSuchElementException("no more items in this listing");
      }
      return page.next();
    }
  }
}
