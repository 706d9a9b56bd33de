/**
 * One place that turns thrown values into Connect errors: a RunlaterError keeps its code
 * and gets a runlater.v1.ErrorInfo detail; a ConnectError passes through; anything else
 * is logged with its cause and reaches the caller as `internal` without internals.
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ErrorInfoSchema, ErrorReason } from "@runlater/sdk/gen/errors_pb.js";
import type { Logger } from "pino";
import { type ErrorCode, RunlaterError } from "../engine/errors.js";

const codes: Record<ErrorCode, Code> = {
  invalid_argument: Code.InvalidArgument,
  not_found: Code.NotFound,
  resource_exhausted: Code.ResourceExhausted,
  failed_precondition: Code.FailedPrecondition,
  unavailable: Code.Unavailable,
  deadline_exceeded: Code.DeadlineExceeded,
};

export function toConnectError(err: unknown, log: Logger, procedure: string): ConnectError {
  if (err instanceof RunlaterError) {
    const detail = { desc: ErrorInfoSchema, value: create(ErrorInfoSchema, { reason: ErrorReason[err.reason], field: err.field }) };
    return new ConnectError(err.message, codes[err.code], undefined, [detail], err);
  }
  if (err instanceof ConnectError) return err;
  log.error({ err, procedure }, "internal error");
  return new ConnectError("internal error; the server log has the details", Code.Internal, undefined, undefined, err);
}

export function errorInterceptor(log: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw toConnectError(err, log, req.method.name);
    }
  };
}
