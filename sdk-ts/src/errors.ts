/**
 * The server attaches a runlater.v1.ErrorInfo detail to its errors so callers can branch
 * on a machine-readable reason instead of parsing messages.
 */
import { ConnectError } from "@connectrpc/connect";
import { type ErrorInfo, ErrorInfoSchema, type ErrorReason } from "./gen/runlater/v1/errors_pb.js";

/** The ErrorInfo detail of a failed call, if the error carries one. */
export function errorInfo(err: unknown): ErrorInfo | undefined {
  // Accepts any caught value: only ConnectErrors can carry details.
  if (!(err instanceof ConnectError)) return undefined;
  return err.findDetails(ErrorInfoSchema)[0];
}

/** The runlater.v1.ErrorReason of a failed call, or undefined when it has none. */
export function errorReason(err: unknown): ErrorReason | undefined {
  return errorInfo(err)?.reason;
}
