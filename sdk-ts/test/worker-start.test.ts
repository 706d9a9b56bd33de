/**
 * What a Worker says at start and about failed handlers: start() fails at once, naming
 * the queue and the server, on a queue that does not exist or a server that is not
 * there; a handler's error is logged once per failed attempt at warning level, with its
 * stack. The Python and Java workers do the same (conformance scenario worker-start-checks).
 */
import { createServer } from "node:net";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterEach, expect, it, vi } from "vitest";
import type { RunningServer } from "../../server/src/server.js";
import { createRunlaterClient, type RunlaterClient } from "../src/client.js";
import { DoNotRetry, RetryAfter } from "../src/control.js";
import { errorReason } from "../src/errors.js";
import { ErrorReason } from "../src/gen/runlater/v1/errors_pb.js";
import { JobState } from "../src/gen/runlater/v1/job_pb.js";
import { constant } from "../src/retry.js";
import { Worker } from "../src/worker.js";
import { jobInState, uniqueQueue, withTestServer } from "./helpers.js";

let server: RunningServer;
let client: RunlaterClient;
withTestServer((s, c) => {
  server = s;
  client = c;
});
afterEach(() => vi.restoreAllMocks());

/** A URL where nothing listens: a port taken from the OS and given back. */
async function deadUrl(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

it("fails at start on a queue that does not exist, naming the queue and the server, and takes no job", async () => {
  const queue = uniqueQueue("missing");
  const worker = new Worker({ client, queue, handler: async () => {} });
  const err = await worker.start().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  expect((err as ConnectError).code).toBe(Code.NotFound);
  expect(errorReason(err)).toBe(ErrorReason.QUEUE_NOT_FOUND);
  expect((err as ConnectError).rawMessage).toContain(`worker cannot start on queue "${queue}" at ${server.url}`);
  await expect(worker.run()).rejects.toThrow(/does not exist/);
  await worker.stop(); // a worker that never started stops at once
});

it("fails at start when no server is there, naming the server", async () => {
  const url = await deadUrl();
  const worker = new Worker({ client: createRunlaterClient(url), queue: "q", handler: async () => {} });
  const err = await worker.start().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect((err as ConnectError).code).toBe(Code.Unavailable);
  expect((err as ConnectError).rawMessage).toContain(`worker cannot start on queue "q" at ${url}`);
  await worker.stop();
});

it("logs a handler's error once per failed attempt, at warning level, with its stack; RetryAfter and DoNotRetry are not logged", async () => {
  const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
  const error = vi.spyOn(console, "error").mockImplementation(() => {});
  const queue = uniqueQueue("logged");
  await client.createQueue(queue);
  const worker = new Worker({
    client,
    queue,
    retryPolicy: constant(10),
    handler: async (job) => {
      const what = job.text();
      if (what === "decided" && job.attempt === 1) throw new RetryAfter(10, "later");
      if (what === "refused") throw new DoNotRetry("no");
      if (what === "broken" && job.attempt === 1) throw new Error("kaput");
      return "ok";
    },
  });
  await worker.start();
  const [broken, decided, refused] = await client.enqueueMany(
    ["broken", "decided", "refused"].map((body) => ({ queue, body })),
  );
  await jobInState(client, broken!, JobState.SUCCEEDED);
  await jobInState(client, decided!, JobState.SUCCEEDED);
  await jobInState(client, refused!, JobState.FAILED);
  await worker.stop();
  expect(warn).toHaveBeenCalledTimes(1);
  const [message, logged] = warn.mock.calls[0]!;
  expect(message).toBe(`runlater worker: job ${broken} of ${queue} failed (attempt 1 of 11):`);
  expect((logged as Error).message).toBe("kaput");
  expect((logged as Error).stack).toContain("worker-start.test.ts"); // console.warn prints it
  expect(error).not.toHaveBeenCalled();
});

it("streams past the client's own call deadline: the stream is not cut every timeoutMs", async () => {
  const queue = uniqueQueue("deadline");
  await client.queues.createQueue({ name: queue });
  const short = createRunlaterClient(server.url, { timeoutMs: 200 });
  const errors: unknown[] = [];
  const worker = new Worker({
    client: short,
    queue,
    dequeueMode: "stream",
    handler: async () => "done",
    onError: (err) => errors.push(err),
  });
  await worker.start();
  try {
    await new Promise((resolve) => setTimeout(resolve, 500)); // past the client's deadline, idle
    const [id] = (await client.jobs.enqueue({ jobs: [{ queue }] })).jobIds;
    expect((await jobInState(client, id!, JobState.SUCCEEDED)).customStatus).toBe("done");
    expect(errors).toEqual([]);
  } finally {
    await worker.stop();
    short.close();
  }
});
