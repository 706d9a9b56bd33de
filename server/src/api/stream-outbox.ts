/**
 * The messages a stream handler has queued for the client, in order, read by Connect as
 * the handler's response stream (one reader). Ends when closed; when failed, ends by
 * throwing the error once the messages queued before the failure have been read, so
 * nothing already queued is dropped. Its producers bound it (waitBelow): on a
 * DequeueStream, the worker's credits and the acks it sends.
 */
export class StreamOutbox<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private ended = false;
  private error: { reason: unknown } | undefined;
  private wakeReader: (() => void) | undefined;
  private wakeProducer: (() => void) | undefined;

  /** Queues `item`; false (and dropped) once the outbox has ended. */
  push(item: T): boolean {
    if (this.ended) return false;
    this.items.push(item);
    this.wakeReader?.();
    this.wakeReader = undefined;
    return true;
  }

  /** Resolves once at most `n` messages wait to be read, or the outbox has ended. */
  async waitBelow(n: number): Promise<void> {
    while (this.items.length > n && !this.ended) {
      await new Promise<void>((resolve) => {
        this.wakeProducer = resolve;
      });
    }
  }

  close(): void {
    this.ended = true;
    this.wakeReader?.();
    this.wakeReader = undefined;
    this.wakeProducer?.();
    this.wakeProducer = undefined;
  }

  /** Ends with `reason` after what was queued so far; the first failure wins. */
  fail(reason: unknown): void {
    if (this.ended) return;
    this.error = { reason };
    this.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.items.length > 0) {
        const item = this.items.shift() as T;
        this.wakeProducer?.();
        this.wakeProducer = undefined;
        yield item;
      } else if (this.ended) {
        if (this.error) throw this.error.reason;
        return;
      } else {
        await new Promise<void>((resolve) => {
          this.wakeReader = resolve;
        });
      }
    }
  }
}
