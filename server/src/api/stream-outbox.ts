/**
 * The messages a stream handler has queued for the client, in order, read by Connect as
 * the handler's response stream (one reader, which asks for the next message only once
 * the previous one is written to the connection: connect-node waits for 'drain').
 *
 * - Ends when closed; when failed, ends by throwing the error once the messages queued
 *   before the failure have been read, so nothing already queued is dropped.
 * - Its producers bound it: waitBelow (messages) and waitWeightBelow (the weight of what
 *   is queued, e.g. the body bytes of the jobs it carries).
 * - If the connection fails (Connect throws the write error into the reader) or the reader
 *   stops early, the messages never written — those queued, and the one whose write
 *   failed — go to `onDropped`, so their owner can take them back; the reader's error
 *   becomes `canceled`: the client went away, which is no server fault. A connection
 *   closed while a write waits for 'drain' may never fail that write: abandon() drops the
 *   unwritten messages then (the server calls it for every stream once its connections
 *   are closed).
 */
import { Code, ConnectError } from "@connectrpc/connect";

export interface StreamOutboxOptions<T> {
  /** What a message weighs for waitWeightBelow (default 0). */
  weigh?: (item: T) => number;
  /** Messages queued but never written, when the stream ends without them. */
  onDropped?: (items: T[]) => void;
}

export class StreamOutbox<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private weight = 0;
  private ended = false;
  private error: { reason: unknown } | undefined;
  private wakeReader: (() => void) | undefined;
  private wakeProducers: Array<() => void> = [];
  /** Handed to the writer, and known to be written only once it asks for the next. */
  private writing: T | undefined;
  /** The writer has read everything (finished) or the unwritten messages were dropped. */
  private settled = false;
  private settle!: () => void;
  /** Resolves once the writer has read everything, or the unwritten messages were dropped. */
  readonly done = new Promise<void>((resolve) => {
    this.settle = resolve;
  });

  constructor(private readonly o: StreamOutboxOptions<T> = {}) {}

  /** Queues `item`; false (and dropped) once the outbox has ended. */
  push(item: T): boolean {
    if (this.ended) return false;
    this.items.push(item);
    this.weight += this.o.weigh?.(item) ?? 0;
    this.wakeReader?.();
    this.wakeReader = undefined;
    return true;
  }

  /** Resolves once at most `n` messages wait to be read, or the outbox has ended. */
  async waitBelow(n: number): Promise<void> {
    while (this.items.length > n && !this.ended) await this.producerTurn();
  }

  /** Resolves once the messages waiting to be read weigh at most `max`, or the outbox has ended. */
  async waitWeightBelow(max: number): Promise<void> {
    while (this.weight > max && !this.ended) await this.producerTurn();
  }

  close(): void {
    this.ended = true;
    this.wakeReader?.();
    this.wakeReader = undefined;
    this.wakeAllProducers();
  }

  /** Ends with `reason` after what was queued so far; the first failure wins. */
  fail(reason: unknown): void {
    if (this.ended) return;
    this.error = { reason };
    this.close();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    try {
      for (;;) {
        if (this.settled) return;
        if (this.items.length > 0) {
          const item = this.items.shift() as T;
          this.weight -= this.o.weigh?.(item) ?? 0;
          this.wakeAllProducers();
          this.writing = item;
          try {
            yield item;
          } catch (err) {
            throw new ConnectError(`the client went away: ${(err as Error).message ?? String(err)}`, Code.Canceled);
          }
          this.writing = undefined;
        } else if (this.ended) {
          this.settled = true;
          this.settle();
          if (this.error) throw this.error.reason;
          return;
        } else {
          await new Promise<void>((resolve) => {
            this.wakeReader = resolve;
          });
        }
      }
    } finally {
      this.abandon();
    }
  }

  /** Drops what was never written (see onDropped) and ends; nothing once the writer has read everything. */
  abandon(): void {
    if (this.settled) return;
    this.settled = true;
    const dropped = this.writing === undefined ? this.items.splice(0) : [this.writing, ...this.items.splice(0)];
    this.writing = undefined;
    this.weight = 0;
    this.ended = true;
    this.wakeReader?.();
    this.wakeAllProducers();
    this.settle();
    if (dropped.length > 0) this.o.onDropped?.(dropped);
  }

  private producerTurn(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wakeProducers.push(resolve);
    });
  }

  private wakeAllProducers(): void {
    const waiting = this.wakeProducers;
    this.wakeProducers = [];
    for (const wake of waiting) wake();
  }
}
