/**
 * Members in arrival order, for a collection that gains and loses one with every call:
 * add at the end, remove any, read the oldest, all in O(1).
 *
 * Not a Set, on purpose: when V8 rebuilds a Set's (or Map's) hash table, which a Set that
 * churns does every few hundred changes, the old table keeps its members and a link to the
 * new one (for iterators), so once one of those tables has been promoted to the old
 * generation it keeps every later one, and every member and what they hold, alive through
 * young-generation collections until a full one (docs/benchmarks.md, "Maps that churn").
 * Here a removed entry forgets its neighbours.
 */
export class ArrivalList<T> {
  private head: ArrivalEntry<T> | undefined;
  private tail: ArrivalEntry<T> | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `value` as the newest; keep the entry to remove it. */
  add(value: T): ArrivalEntry<T> {
    const entry: ArrivalEntry<T> = { value, prev: undefined, next: undefined, listed: false };
    this.append(entry);
    return entry;
  }

  /** Removes `entry`; false if it was removed already. */
  remove(entry: ArrivalEntry<T>): boolean {
    if (!entry.listed) return false;
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = undefined;
    entry.listed = false;
    this.count--;
    return true;
  }

  /** Moves a listed `entry` to the newest place, in place (nothing allocated). */
  renew(entry: ArrivalEntry<T>): void {
    if (!entry.listed || entry === this.tail) return;
    this.remove(entry);
    this.append(entry);
  }

  /** The oldest value still listed. */
  oldest(): T | undefined {
    return this.head?.value;
  }

  /** The values listed now, oldest first (a copy: removing while going through it is safe). */
  values(): T[] {
    const out: T[] = [];
    for (let e = this.head; e; e = e.next) out.push(e.value);
    return out;
  }

  private append(entry: ArrivalEntry<T>): void {
    entry.prev = this.tail;
    entry.next = undefined;
    entry.listed = true;
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    this.count++;
  }
}

export interface ArrivalEntry<T> {
  readonly value: T;
  prev: ArrivalEntry<T> | undefined;
  next: ArrivalEntry<T> | undefined;
  listed: boolean;
}
