/**
 * The Worker end to end against the real in-process server: outcomes, retries, snooze,
 * concurrency, claim extension, graceful stop and ack batching.
 */
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { createRunlaterClient, type RunlaterClient } from "../src/client.js";
import { DoNotRetry, RetryAfter, snooze } from "../src/control.js";
import { JobState } from "../src/gen/runlater/v1/job_pb.js";
import type { DequeueStreamRequest, DequeueStreamResponse } from "../src/gen/runlater/v1/worker_service_pb.js";
import type { QueueOptions } from "../src/queue-options.js";
import { constant } from "../src/retry.js";
import type { WorkerErrorContext } from "../src/worker/types.js";
import type { WorkerJob } from "../src/worker/worker-job.js";
import { Worker, type WorkerOptions } from "../src/worker.js";
import { eventually, gate, getJob, jobInState, startTestServer, uniqueQueue } from "./helpers.js";

let server: RunningServer;
let client: RunlaterClient;
/** Over HTTP/2: a Worker on it defaults to stream mode. */
let h2client: RunlaterClient;
beforeAll(async () => {
  server = await startTestServer();
  client = createRunlaterClient(server.url);
  h2client = createRunlaterClient(server.url, { httpVersion: "2" });
});
afterAll(async () => {
  h2client.close();
  await server.stop();
});

const started: Worker[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((w) => w.stop()));
});

interface Harness {
  queue: string;
  worker: Worker;
  errors: Array<{ error: unknown; context: WorkerErrorContext }>;
}

/** Creates a fresh queue and a started worker on it; the worker is stopped after the test. */
async function startWorkerIn(
  prefix: string,
  options: Omit<WorkerOptions, "client" | "queue"> & {
    client?: RunlaterClient;
    before?: (queue: string) => Promise<unknown>;
  },
  queueOptions: QueueOptions = {},
): Promise<Harness> {
  const queue = uniqueQueue(prefix);
  await client.createQueue(queue, queueOptions);
  await options.before?.(queue);
  const errors: Harness["errors"] = [];
  const worker = new Worker({
    client,
    queue,
    onError: (error, context) => errors.push({ error, context }),
    ...options,
  });
  await worker.start();
  started.push(worker);
  return { queue, worker, errors };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(["poll", "stream"] as const)("Worker in %s mode", (mode) => {
  const startWorker: typeof startWorkerIn = (prefix, options, queueOptions) =>
    startWorkerIn(
      prefix,
      { dequeueMode: mode, client: mode === "stream" ? h2client : client, ...options },
      queueOptions,
    );

  it("runs a job and reports success with the returned custom status", async () => {
    const seen: WorkerJob[] = [];
    const { queue, errors } = await startWorker("ok", {
      handler: async (job) => {
        seen.push(job);
        return `handled ${job.json<{ n: number }>().n}`;
      },
    });
    const id = await client.enqueue(queue, { n: 7 }, { priority: 2, attemptsAllowed: 3, customStatus: "queued" });
    const job = await jobInState(client, id, JobState.SUCCEEDED);
    expect(job.customStatus).toBe("queued\nhandled 7");
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ id, attempt: 1, attemptsAllowed: 3, priority: 2, customStatus: "queued" });
    expect(seen[0]!.text()).toBe('{"n":7}');
    expect(seen[0]!.createdAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(seen[0]!.signal.aborted).toBe(false);
    expect(errors).toEqual([]);
  });

  it("retries after a RetryAfter and succeeds on attempt 2", async () => {
    const attempts: number[] = [];
    const { queue } = await startWorker("retry_after", {
      handler: async (job) => {
        attempts.push(job.attempt);
        if (job.attempt === 1) throw new RetryAfter(50, "not yet");
        return "second time lucky";
      },
    });
    // The queue's own policy would wait 5 s: only the delayed NACK makes this fast.
    const id = await client.enqueue(queue, "x");
    const job = await jobInState(client, id, JobState.SUCCEEDED, 3_000);
    expect(attempts).toEqual([1, 2]);
    expect(job.customStatus).toBe("not yet\nsecond time lucky");
  });

  it("uses the worker's retry policy for a thrown error and reports it", async () => {
    const attempts: number[] = [];
    const { queue, errors } = await startWorker("policy", {
      retryPolicy: constant(30),
      handler: async (job) => {
        attempts.push(job.attempt);
        if (job.attempt === 1) throw new Error("flaky dependency");
      },
    });
    const id = await client.enqueue(queue, "x");
    const job = await jobInState(client, id, JobState.SUCCEEDED, 3_000);
    expect(attempts).toEqual([1, 2]);
    expect(job.customStatus).toBe("flaky dependency");
    expect(errors.map((e) => e.context)).toEqual([{ op: "handler", jobId: id, attempt: 1, attemptsAllowed: 11 }]);
  });

  it("without a retry policy leaves the delay to the queue's policy", async () => {
    const { queue } = await startWorker(
      "queue_policy",
      { handler: async () => Promise.reject(new Error("nope")) },
      { retryPolicy: { initialDelayMs: 60_000 } },
    );
    const id = await client.enqueue(queue, "x");
    const job = await eventually(async () => {
      const j = await getJob(client, id);
      if (j.state !== JobState.PENDING || j.attemptsRemaining !== 10) throw new Error("not retried yet");
      return j;
    });
    // The queue says 60 s before retry 1; a worker-side default would have said otherwise.
    expect(timestampMs(job.runAfter!) - Date.now()).toBeGreaterThan(50_000);
  });

  it("fails a job for good on DoNotRetry", async () => {
    let calls = 0;
    const { queue, errors } = await startWorker("no_retry", {
      handler: async () => {
        calls++;
        throw new DoNotRetry("bad input");
      },
    });
    const id = await client.enqueue(queue, "x", { attemptsAllowed: 5 });
    const job = await jobInState(client, id, JobState.FAILED);
    expect(calls).toBe(1);
    expect(job.attemptsRemaining).toBe(4);
    expect(job.customStatus).toBe("bad input");
    expect(errors).toEqual([]);
  });

  it("fails a job once its attempts are used up", async () => {
    const attempts: number[] = [];
    const { queue } = await startWorker("exhausted", {
      handler: async (job) => {
        attempts.push(job.attempt);
        throw new RetryAfter(10, `attempt ${job.attempt} failed`);
      },
    });
    const id = await client.enqueue(queue, "x", { attemptsAllowed: 3 });
    const job = await jobInState(client, id, JobState.FAILED, 3_000);
    expect(attempts).toEqual([1, 2, 3]);
    expect(job.attemptsRemaining).toBe(0);
    expect(job.customStatus).toBe("attempt 1 failed\nattempt 2 failed\nattempt 3 failed");
  });

  it("snoozes a job back to PENDING without charging an attempt", async () => {
    const calls: Array<{ attempt: number; at: number }> = [];
    const { queue } = await startWorker("snooze", {
      handler: async (job) => {
        calls.push({ attempt: job.attempt, at: Date.now() });
        if (calls.length === 1) return snooze(300, "sleeping");
        return "awake";
      },
    });
    const id = await client.enqueue(queue, "x", { attemptsAllowed: 2 });
    const snoozed = await eventually(async () => {
      const j = await getJob(client, id);
      if (j.state !== JobState.PENDING || !j.customStatus.includes("sleeping")) throw new Error("not snoozed yet");
      return j;
    });
    expect(snoozed.attemptsRemaining).toBe(2);
    expect(timestampMs(snoozed.runAfter!)).toBeGreaterThan(Date.now());
    const done = await jobInState(client, id, JobState.SUCCEEDED, 3_000);
    expect(done.customStatus).toBe("sleeping\nawake");
    expect(calls.map((c) => c.attempt)).toEqual([1, 1]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(250);
  });

  it("never runs more handlers at once than its concurrency", async () => {
    let now = 0;
    let max = 0;
    const { queue } = await startWorker("concurrency", {
      concurrency: 3,
      batchSize: 8, // more jobs on hand than slots: the slots, not the batch, must limit
      handler: async () => {
        now++;
        max = Math.max(max, now);
        await sleep(30);
        now--;
      },
    });
    const ids = await client.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect(max).toBe(3);
  });

  it("keeps a job's claim alive past a short claim timeout", async () => {
    const attempts: number[] = [];
    const { queue, errors } = await startWorker(
      "extend",
      {
        handler: async (job) => {
          attempts.push(job.attempt);
          await sleep(900);
          return "long job done";
        },
      },
      { claimTimeoutMs: 300 },
    );
    const id = await client.enqueue(queue, "x");
    const job = await jobInState(client, id, JobState.SUCCEEDED, 5_000);
    expect(attempts).toEqual([1]);
    expect(job.attemptsRemaining).toBe(10);
    expect(errors).toEqual([]);
  });

  it("loses the claim of a long job when claim extension is off (control for the test above)", async () => {
    const attempts: number[] = [];
    const { queue, errors } = await startWorker(
      "no_extend",
      {
        claimExtension: false,
        concurrency: 1,
        handler: async (job) => {
          attempts.push(job.attempt);
          if (job.attempt === 1) await sleep(900);
        },
      },
      { claimTimeoutMs: 300, retryPolicy: { initialDelayMs: 10 } },
    );
    const id = await client.enqueue(queue, "x");
    await eventually(() => expect(errors.some((e) => String(e.error).includes("STALE_CLAIM"))).toBe(true), 5_000);
    const job = await jobInState(client, id, JobState.SUCCEEDED);
    expect(attempts).toEqual([1, 2]);
    expect(job.customStatus).toContain("claim timed out");
  });

  it("aborts the handler's signal when the server says the claim is gone", async () => {
    let signal: AbortSignal | undefined;
    const { queue, errors } = await startWorker(
      "lost",
      {
        handler: async (job) => {
          signal = job.signal;
          await new Promise((resolve) => job.signal.addEventListener("abort", resolve));
          return "should not be reported";
        },
      },
      { claimTimeoutMs: 200 },
    );
    const id = await client.enqueue(queue, "x");
    await jobInState(client, id, JobState.RUNNING);
    // Deleting a running job makes its next claim renewal come back NOT_FOUND.
    await client.jobs.deleteJobs({ queue, state: JobState.RUNNING });
    await eventually(() => expect(signal?.aborted).toBe(true), 3_000);
    expect(errors.map((e) => String(e.error))).toEqual([`Error: claim on job ${id} lost: NOT_FOUND`]);
  });

  it("stops gracefully: finishes running jobs, releases the ones not started", async () => {
    const release = gate();
    const calls: string[] = [];
    const { queue, worker } = await startWorker("stop", {
      concurrency: 1,
      batchSize: 5,
      handler: async (job) => {
        calls.push(job.id);
        await release.promise;
        return "finished during stop";
      },
    });
    const ids = await client.enqueueMany(
      Array.from({ length: 5 }, (_, i) => ({ queue, body: `${i}`, attemptsAllowed: 4 })),
    );
    // All five handed to the worker: one running, four waiting in its buffer.
    await eventually(async () => {
      const { count } = await client.jobs.countJobs({ queue, state: JobState.RUNNING });
      expect(count).toBe(5n);
      expect(calls).toHaveLength(1);
    });
    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    // The four buffered jobs go back while the running one is still going.
    await eventually(async () => {
      const { count } = await client.jobs.countJobs({ queue, state: JobState.PENDING });
      expect(count).toBe(4n);
    });
    expect(stopped).toBe(false);
    release.open();
    await stopping;
    const { jobs } = await client.jobs.getJobs({ jobIds: ids });
    const first = jobs.find((j) => j.jobId === calls[0])!;
    expect(first).toMatchObject({ state: JobState.SUCCEEDED, customStatus: "finished during stop" });
    for (const j of jobs.filter((j) => j !== first)) {
      expect(j.state).toBe(JobState.PENDING);
      expect(j.attemptsRemaining).toBe(4); // released, not failed: no attempt charged
    }
    expect(calls).toHaveLength(1);
  });

  it("stops gracefully with several Dequeue calls in flight: running jobs finish, none is lost or left running", async () => {
    const release = gate();
    const started: string[] = [];
    const { queue, worker } = await startWorker("stop_pullers", {
      concurrency: 4,
      batchSize: 2, // two calls in flight
      pollWaitMs: 5_000, // a call left long-polling must be cut short by stop()
      handler: async (job) => {
        started.push(job.id);
        await release.promise;
      },
    });
    const ids = await client.enqueueMany(
      Array.from({ length: 3 }, (_, i) => ({ queue, body: `${i}`, attemptsAllowed: 4 })),
    );
    await eventually(() => expect(started).toHaveLength(3));
    const stopping = worker.stop();
    release.open();
    await stopping;
    const { jobs } = await client.jobs.getJobs({ jobIds: ids });
    expect(jobs.map((j) => j.state)).toEqual([JobState.SUCCEEDED, JobState.SUCCEEDED, JobState.SUCCEEDED]);
    const { count } = await client.jobs.countJobs({ queue, state: JobState.RUNNING });
    expect(count).toBe(0n);
  });

  it("releases jobs whose handlers outlive the shutdown grace period", async () => {
    let signal: AbortSignal | undefined;
    const { queue, worker } = await startWorker("grace", {
      shutdownGraceMs: 100,
      handler: async (job) => {
        signal = job.signal;
        await new Promise<void>(() => {}); // never finishes
      },
    });
    const id = await client.enqueue(queue, "x", { attemptsAllowed: 2 });
    await jobInState(client, id, JobState.RUNNING);
    await eventually(() => expect(signal).toBeDefined());
    const t0 = Date.now();
    await worker.stop();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(90);
    expect(signal!.aborted).toBe(true);
    const job = await getJob(client, id);
    expect(job.state).toBe(JobState.PENDING);
    expect(job.attemptsRemaining).toBe(2);
  });
});

describe("Worker in poll mode", () => {
  const startWorker: typeof startWorkerIn = (prefix, options, queueOptions) =>
    startWorkerIn(prefix, { dequeueMode: "poll", ...options }, queueOptions);

  it("keeps several Dequeue calls in flight when concurrency holds several batches, never asking for more than its free slots", async () => {
    const seen = newDequeueTally();
    const spy = createRunlaterClient(server.url, { interceptors: [tallyDequeues(seen)] });
    const { queue } = await startWorker("pullers", {
      client: spy,
      concurrency: 8,
      batchSize: 2, // room for four batches: up to four calls in flight
      pollWaitMs: 200,
      handler: async () => {
        seen.running++;
        await sleep(5);
        seen.running--;
      },
    });
    const ids = await client.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect(seen.maxInFlight).toBeGreaterThan(1);
    expect(seen.maxInFlight).toBeLessThanOrEqual(4);
    expect(seen.maxSpokenFor).toBeLessThanOrEqual(8);
  });

  it("keeps one Dequeue call in flight when a batch fills its concurrency", async () => {
    const seen = newDequeueTally();
    const spy = createRunlaterClient(server.url, { interceptors: [tallyDequeues(seen)] });
    const { queue } = await startWorker("one_puller", {
      client: spy,
      concurrency: 4,
      pollWaitMs: 200,
      handler: () => sleep(5).then(() => undefined),
    });
    const ids = await client.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect(seen.maxInFlight).toBe(1);
  });

  it("piggy-backs acks on the next Dequeue instead of calling Ack", async () => {
    const calls = { dequeue: 0, dequeueWithAck: 0, ackedOnDequeue: 0, ack: 0 };
    const spy = createRunlaterClient(server.url, { interceptors: [countCalls(calls)] });
    const { queue } = await startWorker("piggy", { client: spy, concurrency: 1, handler: async () => {} });
    const ids = await client.enqueueMany(Array.from({ length: 10 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect(calls.ack).toBe(0);
    expect(calls.ackedOnDequeue).toBe(10);
    expect(calls.dequeueWithAck).toBeGreaterThanOrEqual(1);
  });

  it("sends acks with an Ack call when saturated and not dequeuing", async () => {
    const calls = { dequeue: 0, dequeueWithAck: 0, ackedOnDequeue: 0, ack: 0 };
    const spy = createRunlaterClient(server.url, { interceptors: [countCalls(calls)] });
    const hold = gate();
    let fast = "";
    await startWorker("saturated", {
      client: spy,
      concurrency: 4, // refills once 2 slots are free
      // All four jobs are due before the worker starts, so its first Dequeue takes them all.
      before: async (queue) => {
        [fast = ""] = await client.enqueueMany([
          { queue, body: "fast" },
          ...Array.from({ length: 3 }, () => ({ queue, body: "slow" })),
        ]);
      },
      handler: async (job) => {
        if (job.text() !== "fast") await hold.promise;
      },
    });
    await jobInState(client, fast, JobState.SUCCEEDED);
    expect(calls.ack).toBe(1);
    expect(calls.ackedOnDequeue).toBe(0);
    hold.open();
  });

  it("never loses an ack to a network error", async () => {
    let failures = 0;
    const flaky: Interceptor = (next) => async (req) => {
      const carriesAck =
        req.method.name === "Ack" ||
        (req.method.name === "Dequeue" && (req.message as { ack?: unknown }).ack !== undefined);
      if (carriesAck && failures === 0) {
        failures++;
        throw new ConnectError("connection reset (before sending)", Code.Unavailable);
      }
      if (carriesAck && failures === 1) {
        failures++;
        await next(req); // the server applied it, but the answer is lost
        throw new ConnectError("connection reset (answer lost)", Code.Unavailable);
      }
      return next(req);
    };
    const spy = createRunlaterClient(server.url, { interceptors: [flaky] });
    const { queue, errors } = await startWorker("flaky", { client: spy, concurrency: 1, handler: async () => "ok" });
    const id = await client.enqueue(queue, "x");
    const job = await jobInState(client, id, JobState.SUCCEEDED, 5_000);
    expect(job.customStatus).toBe("ok");
    expect(failures).toBe(2);
    expect(errors.some((e) => String(e.error).includes("connection reset"))).toBe(true);
  });
});

describe("Worker in stream mode", () => {
  const startWorker: typeof startWorkerIn = (prefix, options, queueOptions) =>
    startWorkerIn(prefix, { ...options, client: options.client ?? h2client }, queueOptions);
  const spies: RunlaterClient[] = [];
  afterAll(() => {
    for (const c of spies) c.close();
  });
  const overH2 = (interceptor: Interceptor) => {
    const spy = createRunlaterClient(server.url, { httpVersion: "2", interceptors: [interceptor] });
    spies.push(spy);
    return spy;
  };
  /** A client (HTTP version left open) that counts the calls it and its workers make, by method. */
  const countingClient = () => {
    const calls = new Map<string, number>();
    const spy = createRunlaterClient(server.url, {
      interceptors: [
        (next) => (req) => {
          calls.set(req.method.name, (calls.get(req.method.name) ?? 0) + 1);
          return next(req);
        },
      ],
    });
    return { calls, spy };
  };
  /** A client over HTTP/2 that counts the calls it makes, by method. */
  const countingH2Client = () => {
    const calls = new Map<string, number>();
    const spy = overH2((next) => (req) => {
      calls.set(req.method.name, (calls.get(req.method.name) ?? 0) + 1);
      return next(req);
    });
    return { calls, spy };
  };

  it("is the default wherever the transport allows: a default client over http:// streams (h2c)", async () => {
    expect(h2client.streams).toBe(true);
    expect(client.streams).toBe(true);
    expect(createRunlaterClient(server.url, { httpVersion: "2", protocol: "grpc-web" }).streams).toBe(false);
    const handler = async () => {};
    const modeOf = (c: RunlaterClient, dequeueMode?: "stream" | "poll") =>
      new Worker({ client: c, queue: "q", handler, dequeueMode }).settings.dequeueMode;
    expect(modeOf(h2client)).toBe("stream");
    expect(modeOf(client)).toBe("stream"); // (over https://, no httpVersion given: its own HTTP/2 session, tls.test.ts)
    expect(modeOf(client, "poll")).toBe("poll");
    expect(modeOf(createRunlaterClient(server.url, { protocol: "grpc-web" }))).toBe("poll");
    const http1 = createRunlaterClient(server.url, { httpVersion: "1.1" });
    expect(modeOf(http1)).toBe("poll");
    expect(() => new Worker({ client: http1, queue: "q", handler, dequeueMode: "stream" })).toThrow(
      /needs a client over HTTP\/2/,
    );
    // And it does stream: jobs come and outcomes go on one DequeueStream.
    const { calls, spy } = countingClient();
    const { queue } = await startWorker("own_h2", { client: spy, handler: async (job) => `own ${job.text()}` });
    const ids = await client.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect(Object.fromEntries(calls)).toEqual({ GetQueue: 1, DequeueStream: 1 });
  });

  it("takes jobs and sends outcomes on one stream: no Dequeue or Ack call", async () => {
    const { calls, spy } = countingH2Client();
    const { queue, errors } = await startWorker("one_stream", {
      client: spy,
      concurrency: 4,
      handler: async (job) => `done ${job.text()}`,
    });
    const ids = await client.enqueueMany(Array.from({ length: 50 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect((await getJob(client, ids[49]!)).customStatus).toBe("done 49");
    expect(Object.fromEntries(calls)).toEqual({ GetQueue: 1, DequeueStream: 1 });
    expect(errors).toEqual([]);
  });

  it("never has more jobs granted and running than its slots", async () => {
    const seen = { onTheWay: 0, running: 0, maxSpokenFor: 0 };
    const note = () => (seen.maxSpokenFor = Math.max(seen.maxSpokenFor, seen.onTheWay + seen.running));
    const spy = overH2((next) => async (req) => {
      if (!req.stream) return next(req);
      const res = await next({
        ...req,
        message: tap(req.message as AsyncIterable<DequeueStreamRequest>, (m) => {
          seen.onTheWay += m.credit;
          note();
        }),
      });
      if (!res.stream) return res;
      return {
        ...res,
        message: tap(res.message as AsyncIterable<DequeueStreamResponse>, (m) => (seen.onTheWay -= m.jobs.length)),
      } as typeof res;
    });
    const { queue } = await startWorker("credits", {
      client: spy,
      concurrency: 8,
      batchSize: 2,
      handler: async () => {
        seen.running++;
        note();
        await sleep(3);
        seen.running--;
      },
    });
    const ids = await client.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ queue, body: `${i}` })));
    await allSucceeded(queue, ids.length);
    expect(seen.maxSpokenFor).toBe(8);
  });

  it("sends an ack on the stream when saturated, after the flush delay", async () => {
    const { calls, spy } = countingH2Client();
    const hold = gate();
    let fast = "";
    await startWorker("stream_saturated", {
      client: spy,
      concurrency: 4, // credits go out once 2 slots are free: one finished job is not enough
      before: async (queue) => {
        [fast = ""] = await client.enqueueMany([
          { queue, body: "fast" },
          ...Array.from({ length: 3 }, () => ({ queue, body: "slow" })),
        ]);
      },
      handler: async (job) => {
        if (job.text() !== "fast") await hold.promise;
      },
    });
    await jobInState(client, fast, JobState.SUCCEEDED);
    expect(Object.fromEntries(calls)).toEqual({ GetQueue: 1, DequeueStream: 1 });
    hold.open();
  });

  it("never loses an ack when the stream breaks: it is sent again, and a new stream opens", async () => {
    let streams = 0;
    const spy = overH2((next) => async (req) => {
      if (!req.stream || req.method.name !== "DequeueStream" || ++streams > 1) return next(req);
      // The first stream breaks when the worker sends its first ack, which never arrives.
      let broken!: () => void;
      const breaks = new Promise<"broken">((resolve) => (broken = () => resolve("broken")));
      async function* untilAck(messages: AsyncIterable<DequeueStreamRequest>) {
        for await (const m of messages) {
          if (m.ack) return broken();
          yield m;
        }
      }
      const res = await next({ ...req, message: untilAck(req.message as AsyncIterable<DequeueStreamRequest>) });
      if (!res.stream) return res;
      const it = res.message[Symbol.asyncIterator]();
      async function* untilBroken() {
        for (;;) {
          const r = await Promise.race([it.next(), breaks]);
          if (r === "broken") {
            void it.return?.();
            throw new ConnectError("connection reset", Code.Unavailable);
          }
          if (r.done) return;
          yield r.value;
        }
      }
      return { ...res, message: untilBroken() };
    });
    const { queue, errors } = await startWorker("stream_flaky", {
      client: spy,
      concurrency: 1,
      handler: async () => "ok",
    });
    const id = await client.enqueue(queue, "x");
    const job = await jobInState(client, id, JobState.SUCCEEDED, 5_000);
    expect(job.customStatus).toBe("ok"); // the ack the broken stream swallowed, sent again
    expect(errors.some((e) => String(e.error).includes("connection reset"))).toBe(true);
    await eventually(() => expect(streams).toBe(2));
  });
});

/** Passes a stream's messages through, showing each to `see` first. */
async function* tap<T>(messages: AsyncIterable<T>, see: (m: T) => unknown): AsyncGenerator<T> {
  for await (const m of messages) {
    see(m);
    yield m;
  }
}

/** Counts Dequeue and Ack calls, and how many outcomes rode on Dequeues. */
function countCalls(calls: {
  dequeue: number;
  dequeueWithAck: number;
  ackedOnDequeue: number;
  ack: number;
}): Interceptor {
  return (next) => async (req) => {
    if (req.method.name === "Ack") calls.ack++;
    if (req.method.name === "Dequeue") {
      calls.dequeue++;
      const ack = (req.message as { ack?: { succeeded: unknown[]; failed: unknown[] } }).ack;
      if (ack) {
        calls.dequeueWithAck++;
        calls.ackedOnDequeue += ack.succeeded.length + ack.failed.length;
      }
    }
    return next(req);
  };
}

/** Waits until `count` jobs of `queue` succeeded. */
async function allSucceeded(queue: string, count: number): Promise<void> {
  await eventually(async () => {
    const res = await client.jobs.countJobs({ queue, state: JobState.SUCCEEDED });
    expect(res.count).toBe(BigInt(count));
  });
}

/** Dequeue calls in flight and the jobs they ask for; `running` is kept by the test's handler. */
interface DequeueTally {
  inFlight: number;
  maxInFlight: number;
  requested: number;
  running: number;
  /** Most slots spoken for at once: jobs asked for by calls in flight plus handlers running. */
  maxSpokenFor: number;
}

function newDequeueTally(): DequeueTally {
  return { inFlight: 0, maxInFlight: 0, requested: 0, running: 0, maxSpokenFor: 0 };
}

function tallyDequeues(seen: DequeueTally): Interceptor {
  return (next) => async (req) => {
    if (req.method.name !== "Dequeue") return next(req);
    const limit = (req.message as unknown as { limit: number }).limit;
    seen.inFlight++;
    seen.requested += limit;
    seen.maxInFlight = Math.max(seen.maxInFlight, seen.inFlight);
    seen.maxSpokenFor = Math.max(seen.maxSpokenFor, seen.requested + seen.running);
    try {
      return await next(req);
    } finally {
      seen.inFlight--;
      seen.requested -= limit;
    }
  };
}
