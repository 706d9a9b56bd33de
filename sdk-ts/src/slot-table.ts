/**
 * Values in numbered slots, for collections whose members come and go with every job (the
 * jobs a Worker runs, the claims it keeps alive). `add` gives the slot a value lives in;
 * its owner keeps that number and gives it back to `remove`. Nothing is looked up by id.
 *
 * Neither a Map nor an object keyed by job id, on purpose:
 * - When V8 rebuilds a Map's (or Set's) hash table, which a Map whose entries keep coming
 *   and going does every few hundred changes, the old table keeps its entries and a link
 *   to the new one (for iterators that may still walk it). Once one of those tables has
 *   been promoted to the old generation, it keeps every later table, and every job they
 *   held, alive through the young-generation collections until a full one: a Worker of
 *   no-op handlers promoted ~100 MB per 200,000 jobs (docs/benchmarks.md, "Maps that churn").
 * - An object used as a dictionary has no such link, but every job id is a string fresh
 *   from the wire, which V8 must look up in its string table before it can use it as a
 *   key: ~300 ns per use, a tenth of a Worker's time at 50,000 jobs/s (docs/benchmarks.md,
 *   "Reading and writing the jobs by hand").
 * An array slot costs neither.
 */
export class SlotTable<V> {
  private readonly slots: Array<V | undefined> = [];
  /** Slots freed, reused last-freed first (the array stays as long as the most ever held at once). */
  private readonly free: number[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Keeps `value`; returns its slot. */
  add(value: V): number {
    const slot = this.free.pop() ?? this.slots.length;
    this.slots[slot] = value;
    this.count++;
    return slot;
  }

  get(slot: number): V | undefined {
    return this.slots[slot];
  }

  /** Forgets `value` if `slot` still holds it (a freed slot is given to the next value added). */
  remove(slot: number, value: V): boolean {
    if (this.slots[slot] !== value || value === undefined) return false;
    this.slots[slot] = undefined;
    this.free.push(slot);
    this.count--;
    return true;
  }

  /** The first value that passes `test` (a walk over every slot: for rare lookups). */
  find(test: (value: V) => boolean): V | undefined {
    for (const value of this.slots) if (value !== undefined && test(value)) return value;
    return undefined;
  }

  values(): V[] {
    return this.slots.filter((value): value is V => value !== undefined);
  }

  clear(): void {
    this.slots.length = 0;
    this.free.length = 0;
    this.count = 0;
  }
}
