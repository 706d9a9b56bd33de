/**
 * When a call has ended, for interceptors that act then (error mapping, timing): a unary
 * call ends when its answer is ready, a streaming call when its last message has been
 * sent (or it failed), not when its handler returns the stream.
 */
import type { StreamResponse, UnaryResponse } from "@connectrpc/connect";

/**
 * Called once when the call ends: with undefined, or with its error, for which it may
 * return the error to throw instead (undefined: the same one).
 */
export type CallEnded = (err: unknown) => unknown;

export async function onCallEnd<R extends UnaryResponse | StreamResponse>(
  call: Promise<R>,
  ended: CallEnded,
): Promise<R> {
  let res: R;
  try {
    res = await call;
  } catch (err) {
    throw ended(err) ?? err;
  }
  if (res.stream) return { ...res, message: untilEnd(res.message, ended) };
  ended(undefined);
  return res;
}

async function* untilEnd<T>(messages: AsyncIterable<T>, ended: CallEnded): AsyncGenerator<T> {
  let failed = false;
  try {
    yield* messages;
  } catch (err) {
    failed = true;
    throw ended(err) ?? err;
  } finally {
    if (!failed) ended(undefined);
  }
}
