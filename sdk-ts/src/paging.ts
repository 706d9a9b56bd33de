/**
 * Lazy iteration over the server's paged list calls (ListInstances, ListSchedules): a page
 * is asked for only when the one before is used up, so a loop that breaks early reads no
 * more pages than it needs.
 */

/** The largest page the server hands out (docs/limits.md: scan and list pages). */
export const MAX_PAGE_SIZE = 1000;

/** Options every paged list helper takes. */
export interface PageOptions {
  /** Items asked for per call: 1 to 1,000; default the server's (100). */
  pageSize?: number;
}

/**
 * The page size to send (0: the server's default); a RangeError naming the bound for one
 * the server would refuse, thrown before any call.
 */
export function pageSize(o: PageOptions): number {
  const size = o.pageSize;
  if (size === undefined) return 0;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE)
    throw new RangeError(`pageSize ${size}: an integer from 1 to ${MAX_PAGE_SIZE}`);
  return size;
}

/** One page: its items and the token of the next (empty on the last). */
export interface Page<T> {
  items: readonly T[];
  nextPageToken: string;
}

/** Every item of every page, fetching the next page only when the loop gets to it. */
export async function* paged<T>(fetch: (pageToken: string) => Promise<Page<T>>): AsyncGenerator<T, void, undefined> {
  let token = "";
  do {
    const page = await fetch(token);
    yield* page.items;
    token = page.nextPageToken;
  } while (token);
}
