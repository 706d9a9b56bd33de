/**
 * The rule every bound on body bytes follows (a broker's claims, Dequeue answers, lookup
 * and scan answers): items are taken in order until the next would take the total past
 * `maxBytes`, and the first is always taken, so one big body never blocks the rest.
 * Returns a check to call once per item, in order, stopping at the first `false`.
 * Without a bound everything fits. (The Redis claim applies the same rule in Lua.)
 */
export function byteBudget(maxBytes: number | undefined): (bytes: number) => boolean {
  let total = 0;
  let taken = 0;
  return (bytes) => {
    total += bytes;
    if (maxBytes !== undefined && taken > 0 && total > maxBytes) return false;
    taken++;
    return true;
  };
}
