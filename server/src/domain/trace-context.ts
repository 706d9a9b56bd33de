/**
 * W3C trace context (https://www.w3.org/TR/trace-context/#traceparent-header): the
 * traceparent an enqueue may carry is stored with the job and handed to workers, which
 * continue the trace around the handler (docs/tracing.md). Only version 00 is accepted:
 * it is the one version defined, and its fixed length is the field's bound.
 */
import { invalidArgument } from "./errors.js";
import { limits } from "./limits.js";

// version 00, trace id (16 bytes), parent span id (8 bytes), flags; lowercase hex only.
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;
const ZERO_TRACE_ID = "0".repeat(32);
const ZERO_SPAN_ID = "0".repeat(16);

/** The traceparent as stored: undefined for "" (none); a malformed one is refused, naming `field`. */
export function storedTraceparent(value: string, field: string): string | undefined {
  if (value === "") return undefined;
  const ids = value.length === limits.traceparentLength ? TRACEPARENT.exec(value) : null;
  if (!ids) {
    throw invalidArgument(
      field,
      `traceparent must be empty or a W3C traceparent of version 00 ("00-<32 hex>-<16 hex>-<2 hex>", lowercase, ${limits.traceparentLength} characters)`,
    );
  }
  if (ids[1] === ZERO_TRACE_ID || ids[2] === ZERO_SPAN_ID) {
    throw invalidArgument(field, "traceparent must not have an all-zero trace id or parent id");
  }
  return value;
}
