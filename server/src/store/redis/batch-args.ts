/**
 * How the hot scripts' batches travel: ids joined by single spaces in one argument, and items
 * grouped in runs that share values (a claim token, a status, an expiry) sent once per run,
 * not once per job: less for the client to encode and for Redis to parse.
 */

/** Whether an id can travel in a space-joined list (idAt in keys.lua); one that cannot names no job anyway. */
export function joinable(id: string): boolean {
  return id !== "" && !id.includes(" ");
}

/** Consecutive runs of items that `same` says belong together, in order. */
export function runsOf<T>(items: T[], same: (a: T, b: T) => boolean): T[][] {
  const runs: T[][] = [];
  for (const item of items) {
    const last = runs[runs.length - 1];
    if (last && same(last[0]!, item)) last.push(item);
    else runs.push([item]);
  }
  return runs;
}
