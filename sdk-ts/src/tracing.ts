/**
 * W3C trace context through runlater (docs/tracing.md), with the OpenTelemetry API only:
 * an enqueue inside an active span stores that span's traceparent with the job, and the
 * worker runs the handler inside a CONSUMER span whose parent is that span.
 *
 * `@opentelemetry/api` is an optional peer dependency: it is loaded on first use and,
 * when the application has not installed it, everything here is a no-op. It is loaded
 * with require so that an enqueue reads the caller's active span synchronously; the API
 * keeps its registered provider, context manager and propagator on a global, so the
 * CommonJS copy sees what an application registered through the ES module one.
 *
 * The traceparent is written and read here rather than through the global propagator:
 * the field is W3C by contract, whatever propagator (B3, Jaeger, none) the application
 * configured for its own HTTP calls; the API package ships no W3C propagator of its own.
 */
import { createRequire } from "node:module";
import type * as OtelApi from "@opentelemetry/api";

type Api = typeof OtelApi;

/** undefined: not looked for yet; null: not installed. */
let api: Api | null | undefined;

function otel(): Api | null {
  if (api === undefined) {
    try {
      api = createRequire(import.meta.url)("@opentelemetry/api") as Api;
    } catch {
      api = null;
    }
  }
  return api;
}

const TRACER_NAME = "@runlater/sdk";
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The traceparent of the caller's active span, or "" when there is none (or no OpenTelemetry). */
export function activeTraceparent(): string {
  const o = otel();
  const span = o?.trace.getSpanContext(o.context.active());
  if (!o || !span || !o.isSpanContextValid(span)) return "";
  return `00-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
}

/** What the worker's span says about the job. */
export interface TracedJob {
  queue: string;
  jobId: string;
  attempt: number;
  /** The job's stored traceparent; "" for none. */
  traceparent: string;
}

/**
 * Runs `handler` inside a `process <queue>` span (OpenTelemetry messaging conventions:
 * kind CONSUMER), a child of the enqueuing span when the job carries a traceparent. A
 * handler that throws leaves the exception recorded on the span and its status ERROR.
 */
export async function runTraced<T>(job: TracedJob, handler: () => T | Promise<T>): Promise<T> {
  const o = otel();
  if (!o) return handler();
  const remote = remoteContext(o, job.traceparent);
  const parent = remote ? o.trace.setSpanContext(o.context.active(), remote) : o.context.active();
  const options: OtelApi.SpanOptions = {
    kind: o.SpanKind.CONSUMER,
    attributes: {
      "messaging.system": "runlater",
      "messaging.operation.name": "process",
      "messaging.operation.type": "process",
      "messaging.destination.name": job.queue,
      "messaging.message.id": job.jobId,
      "runlater.job.attempt": job.attempt,
    },
  };
  return o.trace.getTracer(TRACER_NAME).startActiveSpan(`process ${job.queue}`, options, parent, async (span) => {
    try {
      return await handler();
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      span.recordException(error);
      span.setStatus({ code: o.SpanStatusCode.ERROR, message: error.message });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The enqueuing span as a remote parent, or undefined for "" or a value that is not a W3C traceparent. */
function remoteContext(o: Api, traceparent: string): OtelApi.SpanContext | undefined {
  const ids = TRACEPARENT.exec(traceparent);
  if (!ids) return undefined;
  const span = { traceId: ids[1]!, spanId: ids[2]!, traceFlags: Number.parseInt(ids[3]!, 16), isRemote: true };
  return o.isSpanContextValid(span) ? span : undefined;
}
