/**
 * The messages of one side of a stream, pushed by producers and read by the stream's
 * writer (one reader). Ends when closed; when failed, ends by throwing the error once the
 * messages pushed before the failure have been read, so nothing already queued is
 * dropped. Unbounded by itself: its producers bound it (on a DequeueStream, the worker's
 * credits and the acks it sends). Shared by the Worker and the server (package export
 * "@runlater/sdk/async-queue.js").
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private ended = false;
  private error: { reason: unknown } | undefined;
  private wake: (() => void) | undefined;
  /** A producer waiting for the reader to catch up (below()). */
  private wakeProducer: (() => void) | undefined;

  /** Messages pushed and not yet read. */
  get length(): number {
    return this.items.length;
  }

  /** Resolves once at most `n` messages wait to be read, or the queue has ended: lets a producer go no faster than the reader. */
  async below(n: number): Promise<void> {
    while (this.items.length > n && !this.ended) {
      await new Promise<void>((resolve) => {
        this.wakeProducer = resolve;
      });
    }
  }

  get failed(): boolean {
    return this.error !== undefined;
  }

  /** Queues `item`; false (and dropped) once the queue has ended. */
  push(item: T): boolean {
    if (this.ended) return false;
    this.items.push(item);
    this.notify();
    return true;
  }

  close(): void {
    this.ended = true;
    this.notify();
    this.wakeProducer?.();
    this.wakeProducer = undefined;
  }

  /** Ends with `reason` after what was pushed so far; the first failure wins. */
  fail(reason: unknown): void {
    if (this.ended) return;
    this.error = { reason };
    this.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        this.wakeProducer?.();
        this.wakeProducer = undefined;
        yield item;
        continue;
      }
      if (this.ended) {
        if (this.error) throw this.error.reason;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
