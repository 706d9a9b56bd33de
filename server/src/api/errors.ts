/**
 * One place that turns thrown values into Connect errors: a RunlaterError keeps its code
 * and gets a runlater.v1.ErrorInfo detail; a ConnectError passes through; anything else
 * is logged with its cause and reaches the caller as `internal` without internals.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ErrorInfoSchema, ErrorReason } from "@runlater/sdk/gen/errors_pb.js";
import type { Logger } from "pino";
import { type ErrorCode, RunlaterError } from "../domain/errors.js";
import { onCallEnd } from "./call-end.js";
import { asClientFault } from "./client-faults.js";

const codes: Record<ErrorCode, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  resource_exhausted: Code.ResourceExhausted,
  failed_precondition: Code.FailedPrecondition,
  unavailable: Code.Unavailable,
  deadline_exceeded: Code.DeadlineExceeded,
  unauthenticated: Code.Unauthenticated,
  permission_denied: Code.PermissionDenied,
};

/** The Connect error a RunlaterError reaches clients as: its code, and an ErrorInfo detail. */
export function runlaterToConnectError(err: RunlaterError): ConnectError {
  const detail = {
    desc: ErrorInfoSchema,
    value: create(ErrorInfoSchema, { reason: ErrorReason[err.reason], field: err.field }),
  };
  return new ConnectError(err.message, codes[err.code], undefined, [detail], err);
}

export function toConnectError(err: unknown, log: Logger, procedure: string): ConnectError {
  if (err instanceof RunlaterError) return runlaterToConnectError(err);
  if (err instanceof ConnectError) return err;
  if (isStoreUnreachable(err)) {
    log.warn({ err, procedure }, "store unreachable");
    return new ConnectError(
      `the store is unreachable (${(err as Error).message}); retry later`,
      Code.Unavailable,
      undefined,
      undefined,
      err,
    );
  }
  log.error({ err, procedure }, "internal error");
  return new ConnectError("internal error; the server log has the details", Code.Internal, undefined, undefined, err);
}

/** Connection-level failures of a store driver (ioredis, mysql2, Node sockets): retryable. */
const unreachableCodes = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "PROTOCOL_CONNECTION_LOST",
  "ER_CON_COUNT_ERROR",
]);

function isStoreUnreachable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  return (
    (typeof code === "string" && unreachableCodes.has(code)) ||
    err.name === "MaxRetriesPerRequestError" ||
    err.message === "Connection is closed."
  );
}

/** Maps errors (see toConnectError) and logs every call at debug level with its duration. */
export function errorInterceptor(log: Logger): Interceptor {
  return (next) => (req) => {
    const started = performance.now();
    return onCallEnd(next(req), (err) => {
      if (err === undefined) {
        if (log.isLevelEnabled("debug"))
          log.debug({ procedure: req.method.name, ms: performance.now() - started }, "call");
        return undefined;
      }
      const mapped = toConnectError(err, log, req.method.name);
      // A streaming call's malformed message reaches interceptors (a unary call's does not:
      // clientFaultGate handles those); correct it here so metrics count the right code.
      const connectError = asClientFault(mapped, req) ?? mapped;
      log.debug(
        {
          procedure: req.method.name,
          ms: performance.now() - started,
          code: Code[connectError.code],
          message: connectError.rawMessage,
        },
        "call failed",
      );
      return connectError;
    });
  };
}
