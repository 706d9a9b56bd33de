/**
 * Which failed calls are worth repeating. Acks and checkpoints are safe to repeat (a
 * repeat of an applied one comes back STALE_CLAIM and changes nothing), so everything
 * that may be transient is retried; errors that say the request itself is wrong are not.
 */
import { Code, ConnectError } from "@connectrpc/connect";

const permanent = new Set<Code>([
  Code.InvalidArgument,
  Code.NotFound,
  Code.PermissionDenied,
  Code.Unauthenticated,
  Code.Unimplemented,
  Code.FailedPrecondition,
  Code.OutOfRange,
]);

export function isRetryable(err: unknown): boolean {
  // Anything that is not a ConnectError (a socket reset surfacing oddly, say) is
  // treated as transient.
  return !(err instanceof ConnectError) || !permanent.has(err.code);
}
