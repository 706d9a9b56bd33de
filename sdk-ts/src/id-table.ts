/**
 * Values by string id, for collections whose members come and go with every job (the
 * jobs a Worker runs, the claims it keeps alive).
 *
 * Not a Map, on purpose. When V8 rebuilds a Map's (or Set's) hash table, which a Map
 * whose entries keep coming and going does every few hundred changes, the old table keeps
 * its entries and a link to the new one (for iterators that may still walk it). Once one
 * of those tables has lived long enough to be promoted to the old generation, it keeps
 * every later table, and every job they held, alive through the young-generation
 * collections until a full one: a Worker of no-op handlers promoted ~100 MB per 200,000
 * jobs and spent a fifth of its time collecting (docs/benchmarks.md, "Maps that churn").
 * A plain object used as a dictionary has no such link.
 */
export class IdTable<V> {
  private entries: Record<string, V> = Object.create(null);
  private count = 0;

  get size(): number {
    return this.count;
  }

  get(id: string): V | undefined {
    return this.entries[id];
  }

  set(id: string, value: V): void {
    if (!(id in this.entries)) this.count++;
    this.entries[id] = value;
  }

  delete(id: string): boolean {
    if (!(id in this.entries)) return false;
    delete this.entries[id];
    this.count--;
    return true;
  }

  values(): V[] {
    return Object.values(this.entries);
  }

  clear(): void {
    this.entries = Object.create(null);
    this.count = 0;
  }
}
