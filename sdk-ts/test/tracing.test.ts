/**
 * Trace context end to end (docs/tracing.md): an enqueue inside a span stores its
 * traceparent, and the worker's `process <queue>` span continues that trace, recorded by
 * the OpenTelemetry SDK's in-memory exporter. The application registers the SDK through
 * the API's ES module; the runlater SDK loads the API on its own (tracing.ts).
 */
import { context, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { createRunlaterClient, type RunlaterClient } from "../src/client.js";
import { DoNotRetry } from "../src/control.js";
import { JobState } from "../src/gen/runlater/v1/job_pb.js";
import type { JobHandler } from "../src/worker/worker-job.js";
import { Worker } from "../src/worker.js";
import { eventually, getJob, jobInState, startTestServer, uniqueQueue } from "./helpers.js";

const exporter = new InMemorySpanExporter();
const tracer = () => trace.getTracer("test-producer");
let server: RunningServer;
let client: RunlaterClient;
const workers: Worker[] = [];

beforeAll(async () => {
  trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }));
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  server = await startTestServer();
  client = createRunlaterClient(server.url);
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  exporter.reset();
});
afterAll(async () => {
  await server.stop();
  trace.disable();
  context.disable();
});

/** A fresh queue, a job enqueued by `enqueue`, and a started worker running `handler`. */
async function runOne(enqueue: (queue: string) => Promise<string>, handler: JobHandler) {
  const queue = uniqueQueue("traced");
  await client.createQueue(queue, { defaultAttemptsAllowed: 1 });
  const id = await enqueue(queue);
  const worker = new Worker({ client, queue, handler, onError: () => {} });
  workers.push(worker);
  await worker.start();
  const processSpan = () =>
    eventually(() => {
      const span = exporter.getFinishedSpans().find((s) => s.name === `process ${queue}`);
      if (!span) throw new Error("no process span yet");
      return span;
    });
  return { queue, id, processSpan };
}

/** Runs `fn` inside a fresh producer span; returns its result and the span's ids. */
function inSpan<T>(fn: () => Promise<T>): Promise<{ result: T; traceId: string; spanId: string }> {
  return tracer().startActiveSpan("producer", async (span: Span) => {
    try {
      const { traceId, spanId } = span.spanContext();
      return { result: await fn(), traceId, spanId };
    } finally {
      span.end();
    }
  });
}

describe("trace context", () => {
  it("stores the enqueuing span's traceparent; the handler runs in a consumer span that is its child", async () => {
    let handlerTraceId: string | undefined;
    let producer: { traceId: string; spanId: string } | undefined;
    const { queue, id, processSpan } = await runOne(
      async (q) => {
        const { result, ...ids } = await inSpan(() => client.enqueue(q, "hi"));
        producer = ids;
        return result;
      },
      async () => {
        handlerTraceId = trace.getActiveSpan()?.spanContext().traceId;
      },
    );
    expect((await getJob(client, id)).traceparent).toBe(`00-${producer!.traceId}-${producer!.spanId}-01`);
    const span = await processSpan();
    expect(span.spanContext().traceId).toBe(producer!.traceId);
    expect(span.parentSpanContext).toMatchObject({ spanId: producer!.spanId, isRemote: true });
    expect(handlerTraceId).toBe(producer!.traceId);
    expect(span.kind).toBe(SpanKind.CONSUMER);
    expect(span.attributes).toEqual({
      "messaging.system": "runlater",
      "messaging.operation.name": "process",
      "messaging.operation.type": "process",
      "messaging.destination.name": queue,
      "messaging.message.id": id,
      "runlater.job.attempt": 1,
    });
    expect(span.status.code).toBe(SpanStatusCode.UNSET);
  });

  it("stores no traceparent outside a span; the handler's span starts a trace of its own", async () => {
    const { id, processSpan } = await runOne(
      (q) => client.enqueue(q, "hi"),
      async () => {},
    );
    expect((await getJob(client, id)).traceparent).toBe("");
    expect((await processSpan()).parentSpanContext).toBeUndefined();
  });

  it("takes an explicit traceparent over the active span's", async () => {
    const given = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const { id } = await runOne(
      async (q) => (await inSpan(() => client.enqueue(q, "hi", { traceparent: given }))).result,
      async () => {},
    );
    expect((await getJob(client, id)).traceparent).toBe(given);
  });

  it("records a failing handler's exception and marks its span as an error", async () => {
    const { id, processSpan } = await runOne(
      async (q) => (await inSpan(() => client.enqueue(q, "hi"))).result,
      async () => {
        throw new DoNotRetry("card declined");
      },
    );
    const span = await processSpan();
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: "card declined" });
    expect(span.events.map((e) => [e.name, e.attributes?.["exception.message"]])).toEqual([
      ["exception", "card declined"],
    ]);
    await jobInState(client, id, JobState.FAILED);
  });
});
