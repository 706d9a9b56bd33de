/**
 * Errors the engine raises for a caller's mistake or a known condition. The API layer
 * maps `code` to a Connect code and `reason` to the runlater.v1.ErrorInfo detail; any
 * other thrown value is an internal error.
 */
export type ErrorCode =
  | "invalid_argument"
  | "not_found"
  | "resource_exhausted"
  | "failed_precondition"
  | "unavailable"
  | "deadline_exceeded"
  | "unauthenticated"
  | "permission_denied";

export type ErrorReasonName =
  | "UNSPECIFIED"
  | "QUEUE_NOT_FOUND"
  | "INVALID_QUEUE_NAME"
  | "INVALID_PRIORITY"
  | "BODY_TOO_LARGE"
  | "BATCH_TOO_LARGE"
  | "INVALID_ARGUMENT"
  | "SHUTTING_DOWN"
  | "NO_BROKER"
  | "WORKFLOW_NOT_FOUND"
  | "INSTANCE_NOT_FOUND"
  | "WORKFLOW_RULE"
  | "CONFLICT"
  | "UNSUPPORTED"
  | "UNAUTHENTICATED"
  | "PERMISSION_DENIED";

export class RunlaterError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly reason: ErrorReasonName,
    message: string,
    readonly field = "",
  ) {
    super(message);
    this.name = "RunlaterError";
  }
}

export function invalidArgument(field: string, message: string): RunlaterError {
  return new RunlaterError("invalid_argument", "INVALID_ARGUMENT", message, field);
}

export function queueNotFound(queue: string, field = "queue"): RunlaterError {
  return new RunlaterError(
    "not_found",
    "QUEUE_NOT_FOUND",
    `queue "${queue}" does not exist; create it with QueueService.CreateQueue ` +
      `(CLI: runlater queue create ${queue})`,
    field,
  );
}

export function answerTooLarge(field: string, bytes: number, max: number): RunlaterError {
  return new RunlaterError(
    "resource_exhausted",
    "BATCH_TOO_LARGE",
    `the bodies asked for in ${field} come to ${bytes} bytes; one answer carries at most ${max}: ask for fewer jobs per call`,
    field,
  );
}

export function batchTooLarge(field: string, count: number, max: number): RunlaterError {
  return new RunlaterError(
    "resource_exhausted",
    "BATCH_TOO_LARGE",
    `${field} has ${count} items; at most ${max} are allowed per call: split the batch`,
    field,
  );
}
