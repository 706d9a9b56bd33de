/**
 * Keeps the file from staying at its high-water mark: after deletes free many pages, give
 * those beyond a reserve back to the file system, a bounded number per call (incremental
 * auto-vacuum, set when the file was created). The reserve is kept because a busy queue
 * refills freed pages soon, and reusing them costs less than growing the file again.
 * A file created without auto-vacuum still reuses its free pages; it just never shrinks.
 */
import type { SqliteContext } from "./context.js";

/** Free pages kept for reuse: 1 MiB of 4 KiB pages, or an eighth of the file if that is more. */
const RESERVE_PAGES = 256;
const RESERVE_SHARE = 1 / 8;
/** Pages given back per call at most (each is moved from the file's end: microseconds each). */
const STEP_PAGES = 2048;

export function releaseFreePages(ctx: SqliteContext): void {
  const free = ctx.get<{ freelist_count: number }>("PRAGMA freelist_count")?.freelist_count ?? 0;
  if (free <= RESERVE_PAGES) return;
  const pages = ctx.get<{ page_count: number }>("PRAGMA page_count")?.page_count ?? 0;
  const reserve = Math.max(RESERVE_PAGES, Math.floor(pages * RESERVE_SHARE));
  const excess = free - reserve;
  if (excess > 0) ctx.all(`PRAGMA incremental_vacuum(${Math.min(excess, STEP_PAGES)})`);
}
