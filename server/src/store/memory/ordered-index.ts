import { Heap } from "./heap.js";

/**
 * A min-priority queue tuned for keys that mostly arrive in order: jobs enqueued "now"
 * (run_after = now, rising seq) and claims started now (expiry = now + timeout). Entries
 * not smaller than the last appended one go to a FIFO in O(1); the rest (delayed retries,
 * claim extensions, scheduled jobs) go to a heap. The minimum is the smaller of the two
 * fronts. Like Heap, entries are never removed from the middle: callers skip stale ones.
 */
export class OrderedIndex<T> {
  private fifo: T[] = [];
  private head = 0;
  private readonly heap: Heap<T>;

  constructor(private readonly less: (a: T, b: T) => boolean) {
    this.heap = new Heap(less);
  }

  get size(): number {
    return this.fifo.length - this.head + this.heap.size;
  }

  push(item: T): void {
    const last = this.fifo[this.fifo.length - 1];
    if (this.head === this.fifo.length || (last !== undefined && !this.less(item, last))) this.fifo.push(item);
    else this.heap.push(item);
  }

  peek(): T | undefined {
    const a = this.fifo[this.head];
    const b = this.heap.peek();
    if (a === undefined) return b;
    if (b === undefined) return a;
    return this.less(b, a) ? b : a;
  }

  pop(): T | undefined {
    const a = this.fifo[this.head];
    const b = this.heap.peek();
    if (a !== undefined && (b === undefined || !this.less(b, a))) {
      this.head++;
      if (this.head === this.fifo.length) {
        this.fifo = [];
        this.head = 0;
      } else if (this.head > 1024 && this.head * 2 > this.fifo.length) {
        this.fifo = this.fifo.slice(this.head);
        this.head = 0;
      }
      return a;
    }
    return this.heap.pop();
  }

  /** Every entry, in no particular order. */
  *values(): Generator<T> {
    for (let i = this.head; i < this.fifo.length; i++) yield this.fifo[i]!;
    yield* this.heap.values();
  }

  clear(): void {
    this.fifo = [];
    this.head = 0;
    this.heap.clear();
  }
}
