/**
 * WorkerService.DequeueStream over real HTTP/2, through both protocols that carry a
 * bidirectional stream (Connect and gRPC): credits bound what is pushed, acks are
 * answered in order, long polling, the worker closing its side, errors, and shutdown.
 */
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, ErrorReason } from "@runlater/sdk/gen/errors_pb.js";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import {
  type DequeueStreamRequestSchema,
  type DequeueStreamResponse,
  Outcome,
  WorkerService,
} from "@runlater/sdk/gen/worker_service_pb.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { StreamOutbox } from "../../src/api/stream-outbox.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ store: new MemoryStore(), port: 0 });
});
afterAll(() => server.stop());

type Request = MessageInitShape<typeof DequeueStreamRequestSchema>;

/** One open stream: send() messages, next() the server's, end() our side. */
function open(transport: Transport) {
  const requests = new StreamOutbox<Request>();
  const responses = createClient(WorkerService, transport).dequeueStream(requests)[Symbol.asyncIterator]();
  return {
    send: (req: Request) => requests.push(req),
    end: () => requests.close(),
    next: async (): Promise<DequeueStreamResponse | undefined> => {
      const r = await responses.next();
      return r.done ? undefined : r.value;
    },
    /**
     * Every message until the server ends the stream, or the error it ended with; then
     * closes our side, as a worker does when the server ends a stream.
     */
    async rest(): Promise<DequeueStreamResponse[] | ConnectError> {
      const all: DequeueStreamResponse[] = [];
      try {
        for (let r = await responses.next(); !r.done; r = await responses.next()) all.push(r.value);
        return all;
      } catch (err) {
        return ConnectError.from(err);
      } finally {
        requests.close();
      }
    },
  };
}

const transports: Record<string, (url: string) => Transport> = {
  "connect over h2c": (url) => createConnectTransport({ baseUrl: url, httpVersion: "2" }),
  // JSON: the server hands out jobs as messages there, not encoded by hand (api/dequeue-stream.ts handOutMessage).
  "connect JSON over h2c": (url) => createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: false }),
  "grpc over h2c": (url) => createGrpcTransport({ baseUrl: url }),
};

let n = 0;
describe.each(Object.entries(transports))("DequeueStream, %s", (_name, makeTransport) => {
  const transport = () => makeTransport(server.url);
  async function newQueue(jobs: number): Promise<{ queue: string; ids: string[] }> {
    const queue = `stream_${++n}`;
    await createClient(QueueService, transport()).createQueue({ name: queue });
    const { jobIds } =
      jobs > 0
        ? await createClient(JobService, transport()).enqueue({
            jobs: Array.from({ length: jobs }, (_, i) => ({ queue, body: new Uint8Array([i]) })),
          })
        : { jobIds: [] };
    return { queue, ids: jobIds };
  }
  const count = async (queue: string, state: JobState) =>
    Number((await createClient(JobService, transport()).countJobs({ queue, state })).count);

  it("pushes no more jobs than the credits granted, and more as credits come", async () => {
    const { queue, ids } = await newQueue(5);
    const stream = open(transport());
    stream.send({ queue, workerId: "test", credit: 3 });
    const first = await stream.next();
    expect(first?.jobs.map((j) => j.jobId)).toEqual(ids.slice(0, 3));
    expect(first?.jobs[0]).toMatchObject({ attempt: 1, attemptsAllowed: 11, priority: 1 });
    expect(first?.jobs[0]?.claimToken).not.toBe("");
    // An ack's answer comes after anything queued before it: no second hand-out was.
    stream.send({ ack: { succeeded: [{ jobId: ids[0]!, claimToken: first!.jobs[0]!.claimToken }] } });
    const answer = await stream.next();
    expect(answer?.jobs).toEqual([]);
    expect(answer?.ack?.results.map((r) => [r.jobId, r.outcome])).toEqual([[ids[0], Outcome.ACKNOWLEDGED]]);
    expect(await count(queue, JobState.RUNNING)).toBe(2);
    expect(await count(queue, JobState.PENDING)).toBe(2);

    stream.send({ credit: 10 });
    const second = await stream.next();
    expect(second?.jobs.map((j) => j.jobId)).toEqual(ids.slice(3));
    stream.end();
    expect(await stream.rest()).toEqual([]);
  });

  it("answers acks in the order they were sent, each with its own outcomes", async () => {
    const { queue } = await newQueue(3);
    const stream = open(transport());
    stream.send({ queue, credit: 3 });
    const jobs = (await stream.next())!.jobs;
    expect(jobs).toHaveLength(3);
    stream.send({ ack: { succeeded: [{ jobId: jobs[0]!.jobId, claimToken: jobs[0]!.claimToken }] } });
    stream.send({ ack: { failed: [{ jobId: jobs[1]!.jobId, claimToken: "not-the-token" }] } });
    stream.send({
      ack: {
        succeeded: [
          { jobId: jobs[2]!.jobId, claimToken: jobs[2]!.claimToken },
          { jobId: `${queue}.0.zzzzzzzzzz`, claimToken: "x" },
        ],
      },
    });
    stream.end();
    const answers = await stream.rest();
    expect(Array.isArray(answers) && answers.map((a) => a.ack?.results.map((r) => Outcome[r.outcome]))).toEqual([
      ["ACKNOWLEDGED"],
      ["STALE_CLAIM"],
      ["ACKNOWLEDGED", "NOT_FOUND"],
    ]);
    expect(await count(queue, JobState.SUCCEEDED)).toBe(2);
  });

  it("long-polls: a job enqueued while the stream waits is pushed at once", async () => {
    const { queue } = await newQueue(0);
    const stream = open(transport());
    stream.send({ queue, credit: 2 });
    const pushed = stream.next();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const [id] = (await createClient(JobService, transport()).enqueue({ jobs: [{ queue }] })).jobIds;
    expect((await pushed)?.jobs.map((j) => j.jobId)).toEqual([id]);
    stream.end();
    expect(await stream.rest()).toEqual([]);
  });

  it("ends when the worker closes its side, leaving unclaimed jobs pending", async () => {
    const { queue } = await newQueue(0);
    const stream = open(transport());
    stream.send({ queue, credit: 5 });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the hand-out is long-polling now
    stream.end();
    expect(await stream.rest()).toEqual([]);
    await createClient(JobService, transport()).enqueue({ jobs: [{ queue }] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await count(queue, JobState.PENDING)).toBe(1);
  });

  it("refuses an unknown queue, a first message without one, another queue later, and too many credits", async () => {
    const unknown = open(transport());
    unknown.send({ queue: "no_such_queue", credit: 1 });
    const notFound = await unknown.rest();
    expect(notFound).toBeInstanceOf(ConnectError);
    expect((notFound as ConnectError).code).toBe(Code.NotFound);
    expect((notFound as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason).toBe(ErrorReason.QUEUE_NOT_FOUND);

    const nameless = open(transport());
    nameless.send({ credit: 1 });
    expect(await nameless.rest()).toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringMatching(/first message of a DequeueStream names the queue/),
    });

    const { queue } = await newQueue(0);
    const other = await newQueue(0);
    const switching = open(transport());
    switching.send({ queue, credit: 1 });
    switching.send({ queue: other.queue, credit: 1 });
    expect(await switching.rest()).toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringMatching(/serves one queue/),
    });

    const greedy = open(transport());
    greedy.send({ queue, credit: 6000 });
    greedy.send({ credit: 6000 });
    expect(await greedy.rest()).toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringMatching(/may not exceed 10000; this message brings them to 12000/),
    });
  });

  it("hands out nothing after an error: jobs stay pending for the next worker", async () => {
    const { queue } = await newQueue(0);
    const stream = open(transport());
    stream.send({ queue, credit: 2 });
    stream.send({ queue: "another_queue" });
    expect(await stream.rest()).toBeInstanceOf(ConnectError);
    await createClient(JobService, transport()).enqueue({ jobs: [{ queue }] });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await count(queue, JobState.PENDING)).toBe(1);
  });
});

describe("DequeueStream in metrics and errors", () => {
  it("counts a stream in the RPC histogram when it ends, with the code it ended with", async () => {
    const transport = createGrpcTransport({ baseUrl: server.url });
    await createClient(QueueService, transport).createQueue({ name: "stream_metrics" });
    const ok = open(transport);
    ok.send({ queue: "stream_metrics", credit: 1 });
    ok.end();
    expect(await ok.rest()).toEqual([]);
    const missing = open(transport);
    missing.send({ queue: "stream_metrics_missing" });
    expect(await missing.rest()).toBeInstanceOf(ConnectError);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const count = (code: string) =>
      Number(
        new RegExp(`runlater_rpc_duration_seconds_count\\{method="DequeueStream",code="${code}"\\} (\\d+)`).exec(
          text,
        )?.[1] ?? 0,
      );
    expect(count("ok")).toBeGreaterThanOrEqual(1);
    expect(count("not_found")).toBeGreaterThanOrEqual(1);
  });
});

describe("DequeueStream and a worker that does not read", () => {
  it("stops reading its messages while its answers wait unread, and reads on once they are read", async () => {
    const transport = createGrpcTransport({ baseUrl: server.url });
    const queue = "stream_unread";
    await createClient(QueueService, transport).createQueue({ name: queue });
    const applied = async () => {
      const text = await (await fetch(`${server.url}/metrics`)).text();
      return Number(
        new RegExp(`runlater_jobs_acked_total\\{queue="${queue}",result="not_found"\\} (\\d+)`).exec(text)?.[1] ?? 0,
      );
    };
    const stream = open(transport);
    stream.send({ queue });
    // 200 acks of 1000 unknown jobs each: ~8 MB of answers, far more than HTTP/2 buffers.
    const acks = 200;
    for (let a = 0; a < acks; a++) {
      stream.send({
        ack: {
          succeeded: Array.from({ length: 1000 }, (_, i) => ({ jobId: `${queue}.0.${a}x${i}`, claimToken: "t" })),
        },
      });
    }
    let before = -1;
    for (let now = await applied(); now !== before; now = await applied()) {
      before = now;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(before).toBeLessThan(acks * 1000);
    stream.end();
    const answers = await stream.rest();
    expect(Array.isArray(answers) && answers.length).toBe(acks);
    expect(await applied()).toBe(acks * 1000);
  });
});

describe("DequeueStream and shutdown", () => {
  it("ends open streams when the server stops, after answering the acks it received", async () => {
    const own = await startServer({ store: new MemoryStore(), port: 0 });
    const transport = createGrpcTransport({ baseUrl: own.url });
    await createClient(QueueService, transport).createQueue({ name: "shutdown" });
    await createClient(JobService, transport).enqueue({ jobs: [{ queue: "shutdown" }] });
    const stream = open(transport);
    stream.send({ queue: "shutdown", credit: 5 });
    const job = (await stream.next())!.jobs[0]!;
    stream.send({ ack: { succeeded: [{ jobId: job.jobId, claimToken: job.claimToken }] } });
    const answer = await stream.next();
    expect(answer?.ack?.results[0]?.outcome).toBe(Outcome.ACKNOWLEDGED);
    const stopped = own.stop();
    expect(await stream.rest()).toEqual([]);
    await stopped; // well within its 10 s grace: the test would time out otherwise
  });
});

describe("DequeueStream and a worker that grants credits but never reads", () => {
  /**
   * A server with 30 jobs of 1 MB (a message carries 3 of them: 3 MiB per message at
   * most) and a stream that grants credits for all of them and never reads an answer;
   * resolves once the number of running jobs stops changing.
   */
  async function stalled(o: { shutdownGraceMs?: number } = {}) {
    const store = new MemoryStore();
    const own = await startServer({ store, port: 0, ...o });
    const transport = createGrpcTransport({ baseUrl: own.url });
    const queue = "stream_stalled";
    await createClient(QueueService, transport).createQueue({ name: queue });
    const body = new Uint8Array(1_000_000);
    for (let i = 0; i < 3; i++) {
      await createClient(JobService, transport).enqueue({ jobs: Array.from({ length: 10 }, () => ({ queue, body })) });
    }
    const counts = async () => ({
      running: await store.jobCount({ queue, filter: { state: "running" }, now: Date.now() }),
      pending: await store.jobCount({ queue, filter: { state: "pending" }, now: Date.now() }),
    });
    const cut = new AbortController();
    const requests = new StreamOutbox<Request>();
    const responses = createClient(WorkerService, transport)
      .dequeueStream(requests, { signal: cut.signal })
      [Symbol.asyncIterator]();
    requests.push({ queue, credit: 30 });
    let running = -1;
    for (let now = (await counts()).running; now !== running; now = (await counts()).running) {
      running = now;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return { own, counts, cut, responses, running };
  }

  it("hands out no more than it may queue, and hands back what it never wrote when the client goes away", async () => {
    const stderr = vi.spyOn(console, "error");
    const { own, counts, cut, responses, running } = await stalled();
    try {
      expect(running).toBeGreaterThan(0);
      // One message being written, and 4 MiB of hand-outs queued behind it (3 jobs a message):
      // not the 30 its credits allow.
      expect(running).toBeLessThanOrEqual(9);
      cut.abort();
      await responses.next().catch(() => undefined);
      let left = await counts();
      for (let tries = 0; left.running > 0 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = await counts();
      }
      expect(left).toEqual({ running: 0, pending: 30 }); // handed back at once, no claim timeout waited
      const text = await (await fetch(`${own.url}/metrics`)).text();
      expect(text).toMatch(/runlater_rpc_duration_seconds_count\{method="DequeueStream",code="canceled"\} 1/);
      expect(text).not.toMatch(/method="DequeueStream",code="internal"/);
      expect(stderr).not.toHaveBeenCalled(); // no "handler failed" for a client that left
    } finally {
      stderr.mockRestore();
      await own.stop();
    }
  });

  it("hands back at shutdown the jobs it could never write", async () => {
    const { own, counts, cut, running } = await stalled({ shutdownGraceMs: 200 });
    expect(running).toBeGreaterThan(0);
    await own.stop();
    expect(await counts()).toEqual({ running: 0, pending: 30 });
    cut.abort();
  });
});

describe("DequeueStream hands out ahead for a worker that comes straight back (--hand-out-ahead)", () => {
  /** A memory store whose hand-outs take `startDelayMs` longer once it is set. */
  class SlowStartStore extends MemoryStore {
    startDelayMs = 0;
    override async jobStartMany(p: Parameters<MemoryStore["jobStartMany"]>[0]) {
      if (this.startDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.startDelayMs));
      return super.jobStartMany(p);
    }
  }

  /** A server holding jobs ahead for `holdMs`, a queue of 10 jobs, and a stream on it. */
  async function setUp(holdMs: number) {
    const store = new SlowStartStore();
    const own = await startServer({ store, port: 0, handOutAheadMs: holdMs });
    const transport = createGrpcTransport({ baseUrl: own.url });
    const queue = "stream_ahead";
    await createClient(QueueService, transport).createQueue({ name: queue });
    const { jobIds } = await createClient(JobService, transport).enqueue({
      jobs: Array.from({ length: 10 }, (_, i) => ({ queue, body: new Uint8Array([i]) })),
    });
    const counts = async () => ({
      running: await store.jobCount({ queue, filter: { state: "running" }, now: Date.now() }),
      pending: await store.jobCount({ queue, filter: { state: "pending" }, now: Date.now() }),
    });
    /** Waits (up to 5 s) for the counts to be `want`; returns the last seen. */
    const countsBecome = async (want: { running: number; pending: number }) => {
      let seen = await counts();
      for (let tries = 0; (seen.running !== want.running || seen.pending !== want.pending) && tries < 100; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        seen = await counts();
      }
      return seen;
    };
    const stream = open(transport);
    /** The next message that carries jobs (ack answers skipped). */
    const nextJobs = async () => {
      for (;;) {
        const message = await stream.next();
        if (!message || message.jobs.length > 0) return message?.jobs ?? [];
      }
    };
    /** Takes 2 jobs, then comes straight back for 2 more with the first two's acks. */
    const twoTurns = async () => {
      stream.send({ queue, credit: 2 });
      const first = await nextJobs();
      stream.send({ credit: 2, ack: { succeeded: first.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })) } });
      return [...first, ...(await nextJobs())];
    };
    /** Two turns, after which 4 jobs are started ahead: 2 acked, 2 with the worker, 4 ahead (two hand-outs of 2), 2 left. */
    const startedAhead = async () => {
      const taken = await twoTurns();
      expect(await countsBecome({ running: 6, pending: 2 })).toEqual({ running: 6, pending: 2 });
      return taken;
    };
    return { own, store, queue, ids: jobIds, counts, countsBecome, stream, nextJobs, twoTurns, startedAhead };
  }

  /** Runs `test` against setUp(holdMs), stopping the server after it. */
  async function withServer(holdMs: number, test: (t: Awaited<ReturnType<typeof setUp>>) => Promise<void>) {
    const t = await setUp(holdMs);
    try {
      await test(t);
    } finally {
      await t.own.stop();
    }
  }

  it("starts the next two hand-outs' jobs before the credits come, then gives each credit one of them", () =>
    withServer(1000, async (t) => {
      const taken = await t.startedAhead();
      expect(taken.map((j) => j.jobId)).toEqual(t.ids.slice(0, 4));
      t.stream.send({ credit: 3 });
      // No more than the credits: three of the four, best first.
      expect((await t.nextJobs()).map((j) => j.jobId)).toEqual(t.ids.slice(4, 7));
      t.stream.send({ credit: 1 });
      expect((await t.nextJobs()).map((j) => j.jobId)).toEqual([t.ids[7]]);
      t.stream.end();
      expect(await t.stream.rest()).toEqual([]);
    }));

  it("hands the jobs it started ahead back to the queue when the worker does not come for them in time", () =>
    withServer(1000, async (t) => {
      await t.startedAhead();
      // No credits come: a second later the four are pending again, for any worker.
      expect(await t.countsBecome({ running: 2, pending: 6 })).toEqual({ running: 2, pending: 6 });
      t.stream.send({ credit: 10 });
      expect((await t.nextJobs()).map((j) => j.jobId).sort()).toEqual(t.ids.slice(4).sort());
      const job = (await t.store.jobGetMany({ ids: [t.ids[4]!] }))[0]!;
      expect(job.attempt).toBe(1); // the hand-back charged no attempt
      t.stream.end();
      await t.stream.rest();
    }));

  it("hands them back at once when the worker closes its side", () =>
    withServer(1000, async (t) => {
      await t.startedAhead();
      const closed = Date.now();
      t.stream.end();
      await t.stream.rest();
      expect(await t.countsBecome({ running: 2, pending: 6 })).toEqual({ running: 2, pending: 6 });
      expect(Date.now() - closed).toBeLessThan(800); // not the 1 s hold
    }));

  it("ends the stream at once when the worker closes its side while jobs are being started ahead", () =>
    withServer(1000, async (t) => {
      t.stream.send({ queue: t.queue, credit: 2 });
      const first = await t.nextJobs();
      t.store.startDelayMs = 300; // the next hand-out, and the start of the jobs ahead after it
      t.stream.send({
        credit: 2,
        ack: { succeeded: first.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })) },
      });
      expect(await t.nextJobs()).toHaveLength(2);
      t.stream.end(); // while the jobs ahead are being started
      const ended = await Promise.race([
        t.stream.rest().then(() => "ended"),
        new Promise((resolve) => setTimeout(() => resolve("still open after 3 s"), 3000)),
      ]);
      expect(ended).toBe("ended");
      expect(await t.countsBecome({ running: 2, pending: 6 })).toEqual({ running: 2, pending: 6 });
    }));

  it("starts nothing ahead for a worker slower than the hold, nor with --hand-out-ahead 0", async () => {
    for (const [holdMs, pauseMs] of [
      [300, 600],
      [0, 0],
    ] as const) {
      await withServer(holdMs, async (t) => {
        t.stream.send({ queue: t.queue, credit: 2 });
        const first = await t.nextJobs();
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        t.stream.send({
          credit: 2,
          ack: { succeeded: first.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })) },
        });
        expect(await t.nextJobs()).toHaveLength(2);
        // At once (jobs started ahead would be held for 300 ms), and again a little later.
        expect(await t.counts()).toEqual({ running: 2, pending: 6 });
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await t.counts()).toEqual({ running: 2, pending: 6 });
        t.stream.end();
        await t.stream.rest();
      });
    }
  });

  it("takes --hand-out-ahead from 0 to 1000 ms, whole, and refuses anything else", async () => {
    for (const ms of [-1, 1001, 1.5, Number.NaN]) {
      await expect(startServer({ store: new MemoryStore(), port: 0, handOutAheadMs: ms })).rejects.toThrow(
        `--hand-out-ahead must be a whole number of milliseconds from 0 to 1000, not ${ms}`,
      );
    }
    for (const ms of [0, 1000])
      await (await startServer({ store: new MemoryStore(), port: 0, handOutAheadMs: ms })).stop();
  });
});
