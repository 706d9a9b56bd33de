/**
 * Values by string id, the least recently used dropped first once there are more than
 * `max`, or once their weight (`weigh`, say their bytes) passes `maxWeight`: a cache whose
 * entries come and go with every job or step.
 *
 * Not a Map, though a Map's insertion order makes an LRU cache in a few lines: one whose
 * entries churn keeps its rebuilt hash tables, and the values they held, alive through
 * young-generation collections (domain/arrival-list.ts, docs/benchmarks.md "Maps that
 * churn"). A plain object finds an entry; an ArrivalList keeps the order of use.
 */
import { type ArrivalEntry, ArrivalList } from "./arrival-list.js";

interface Slot<V> {
  value: V;
  weight: number;
  readonly use: ArrivalEntry<string>;
}

export interface LruWeight<V> {
  /** What one value weighs (bytes, say). */
  weigh(value: V): number;
  /** The weight kept at most; the newest value stays even when it alone weighs more. */
  maxWeight: number;
}

export class LruTable<V> {
  private slots: Record<string, Slot<V>> = Object.create(null);
  private readonly uses = new ArrivalList<string>();
  private weight = 0;

  constructor(
    private readonly max: number,
    private readonly weighing?: LruWeight<V>,
  ) {}

  get size(): number {
    return this.uses.size;
  }

  /** The value kept for `id`, which becomes the most recently used. */
  get(id: string): V | undefined {
    const slot = this.slots[id];
    if (!slot) return undefined;
    this.uses.renew(slot.use);
    return slot.value;
  }

  /** Keeps `value` for `id` as the most recently used; drops the least recently used past `max`. */
  set(id: string, value: V): void {
    const weight = this.weighing ? this.weighing.weigh(value) : 0;
    const slot = this.slots[id];
    if (slot) {
      this.weight += weight - slot.weight;
      slot.value = value;
      slot.weight = weight;
      this.uses.renew(slot.use);
    } else {
      this.slots[id] = { value, weight, use: this.uses.add(id) };
      this.weight += weight;
    }
    if (this.uses.size > this.max) this.delete(this.uses.oldest()!);
    const maxWeight = this.weighing?.maxWeight ?? Number.POSITIVE_INFINITY;
    while (this.weight > maxWeight && this.uses.size > 1) this.delete(this.uses.oldest()!);
  }

  /** The value kept for `id`, no longer kept. */
  take(id: string): V | undefined {
    // Looking up an id the table has never seen costs ~300 ns (V8 looks the fresh string up
    // in its string table): an empty table, the common case of a cache asked on every ACK
    // (Workflows.runsHandedOut with no workflow running), answers without it.
    if (this.uses.size === 0) return undefined;
    const slot = this.slots[id];
    if (!slot) return undefined;
    this.delete(id);
    return slot.value;
  }

  delete(id: string): boolean {
    const slot = this.slots[id];
    if (!slot) return false;
    this.uses.remove(slot.use);
    this.weight -= slot.weight;
    delete this.slots[id];
    return true;
  }
}
