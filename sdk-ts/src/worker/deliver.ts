/**
 * Sends a call whose result must not be lost (acks, snoozes, releases): on a transient
 * error it reports the error and tries again with backoff, until it succeeds, the error
 * is permanent, or the give-up time passes (only set while the worker shuts down, so a
 * dead server cannot hold stop() forever).
 */
import { Backoff, sleep } from "./backoff.js";
import { isRetryable } from "./retryable.js";
import type { WorkerErrorContext, WorkerErrorHandler } from "./types.js";

export interface DeliverOptions {
  onError: WorkerErrorHandler;
  context: WorkerErrorContext;
  /** Epoch ms after which a failed try is not repeated; read before every retry. */
  giveUpAt: () => number;
}

/** The call's result, or undefined if it was given up (the error was reported). */
export async function deliver<T>(send: () => Promise<T>, o: DeliverOptions): Promise<T | undefined> {
  const backoff = new Backoff();
  for (;;) {
    try {
      return await send();
    } catch (err) {
      const delay = backoff.next();
      const givingUp = !isRetryable(err) || Date.now() + delay > o.giveUpAt();
      o.onError(givingUp ? new Error(`${o.context.op} given up: ${String(err)}`, { cause: err }) : err, o.context);
      if (givingUp) return undefined;
      await sleep(delay);
    }
  }
}
