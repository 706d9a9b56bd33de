/**
 * The server-wide bound on request bytes held at once (--max-request-bytes-total): each
 * call's request bytes count from the moment they are read until the call no longer needs
 * them (node-adapter.ts says when). A call whose next bytes would pass the bound waits
 * before reading them (its client is held back by TCP or HTTP/2 flow control) until other
 * calls give bytes back; waiting calls go in arrival order.
 *
 * Why waiting cannot deadlock: the oldest call still reading may always go on, as long as
 * the other calls hold no more than the bound. The others hold more only while calls that
 * finished reading are being handled, and those end. So the total held stays under the
 * bound plus one request (--max-request-bytes), and a single request larger than the
 * bound is still served when it is the oldest.
 */
import { type ArrivalEntry, ArrivalList } from "../domain/arrival-list.js";

export class ReadBudget {
  private heldBytes = 0;
  /** Holds still reading, oldest first (the first may pass the bound). */
  private readonly reading = new ArrivalList<BudgetHold>();
  private readonly waiters: Waiter[] = [];

  constructor(readonly maxBytes: number) {}

  /** Request bytes held now, over every call. */
  get held(): number {
    return this.heldBytes;
  }

  /** Calls waiting to read more. */
  get waiting(): number {
    return this.waiters.length;
  }

  /** Called when a call starts waiting (for a log line). */
  onWait?: () => void;

  /** A new call's share: empty, reading. */
  open(): BudgetHold {
    const hold = new BudgetHold(this);
    hold.readingEntry = this.reading.add(hold);
    return hold;
  }

  /** @internal */
  fits(hold: BudgetHold, bytes: number): boolean {
    if (this.heldBytes + bytes <= this.maxBytes) return true;
    const oldest = this.reading.oldest();
    return oldest === hold && this.heldBytes - hold.held <= this.maxBytes;
  }

  /** @internal */
  take(hold: BudgetHold, bytes: number, signal: AbortSignal | undefined): Promise<void> | undefined {
    if (hold.closed) return Promise.reject(new Error("the call is over"));
    if (bytes <= 0) return undefined;
    if (this.waiters.length === 0 && this.fits(hold, bytes)) {
      this.add(hold, bytes);
      return undefined;
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    this.onWait?.();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { hold, bytes, resolve, reject, signal };
      waiter.onAbort = () => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        signal?.removeEventListener("abort", waiter.onAbort!);
        reject(signal?.reason ?? new Error("the call is over"));
        this.pump();
      };
      signal?.addEventListener("abort", waiter.onAbort, { once: true });
      this.waiters.push(waiter);
      this.pump(); // the oldest reader may go past the bound at once
    });
  }

  /** @internal */
  add(hold: BudgetHold, bytes: number): void {
    hold.held += bytes;
    this.heldBytes += bytes;
  }

  /** @internal */
  give(hold: BudgetHold, bytes: number): void {
    const n = Math.min(bytes, hold.held);
    if (n <= 0) return;
    hold.held -= n;
    this.heldBytes -= n;
    this.pump();
  }

  /** @internal */
  close(hold: BudgetHold): void {
    hold.closed = true;
    // A call that ends while it waits (its client went away) must not be granted later.
    for (const w of this.waiters.filter((w) => w.hold === hold)) w.onAbort?.();
    this.reading.remove(hold.readingEntry!);
    this.give(hold, hold.held);
    this.pump();
  }

  /** @internal */
  stopReading(hold: BudgetHold): void {
    if (this.reading.remove(hold.readingEntry!)) this.pump(); // the next oldest may now pass the bound
  }

  /** Lets every waiter go that fits now, in arrival order. */
  private pump(): void {
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      if (!this.fits(w.hold, w.bytes)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      w.signal?.removeEventListener("abort", w.onAbort!);
      this.add(w.hold, w.bytes);
      w.resolve();
    }
  }
}

interface Waiter {
  hold: BudgetHold;
  bytes: number;
  resolve(): void;
  reject(reason: unknown): void;
  signal: AbortSignal | undefined;
  onAbort?: () => void;
}

/** One call's bytes in the budget. */
export class BudgetHold {
  /** Bytes this call holds now. */
  held = 0;
  closed = false;
  /** @internal Its place among the calls still reading (ReadBudget.open sets it). */
  readingEntry: ArrivalEntry<BudgetHold> | undefined;
  /** Set by whoever reads the call (node-adapter.ts): run when the call's handler starts. */
  handlerStarted?: () => void;

  constructor(private readonly budget: ReadBudget) {}

  /**
   * Counts `bytes` more: undefined when they fit at once, else a promise that settles once
   * they do, or rejects when `signal` aborts (the client went away).
   */
  take(bytes: number, signal?: AbortSignal): Promise<void> | undefined {
    return this.budget.take(this, bytes, signal);
  }

  /** Gives back `bytes` (at most what is held). */
  release(bytes: number): void {
    this.budget.give(this, bytes);
  }

  /** The call has read its whole request: it no longer goes first past the bound. */
  doneReading(): void {
    this.budget.stopReading(this);
  }

  /** The call is over: gives back everything, and takes nothing more. */
  close(): void {
    this.budget.close(this);
  }
}
