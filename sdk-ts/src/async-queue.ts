/**
 * The requests of a worker's DequeueStream: pushed by the Worker (credits, acks) and read
 * by the transport as the request stream (one reader). Ends when closed. Unbounded by
 * itself: the Worker bounds it (credits never exceed its free slots; acks are batched).
 */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private ended = false;
  private wake: (() => void) | undefined;

  /** Queues `item`; dropped once the queue has ended. */
  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.notify();
  }

  close(): void {
    this.ended = true;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
      } else if (this.ended) {
        return;
      } else {
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
      }
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
