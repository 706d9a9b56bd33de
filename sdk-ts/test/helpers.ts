/**
 * Shared test plumbing: an in-process server on a free port, unique queue names, and
 * eventually() for waiting on asynchronous effects without fixed sleeps.
 */

import { afterAll, beforeAll } from "vitest";
import { type RunningServer, startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { createRunlaterClient, type RunlaterClient } from "../src/client.js";
import { type Job, JobState } from "../src/gen/runlater/v1/job_pb.js";

export async function startTestServer(): Promise<RunningServer> {
  // A fast sweep so claim timeouts of a few hundred ms are noticed promptly.
  return startServer({ store: new MemoryStore(), port: 0, sweepIntervalMs: 50 });
}

/**
 * A server and a client of it for a test file: started before its tests (handed to `use`),
 * both closed after them.
 */
export function withTestServer(use: (server: RunningServer, client: RunlaterClient) => void): void {
  let server: RunningServer | undefined;
  let client: RunlaterClient | undefined;
  beforeAll(async () => {
    server = await startTestServer();
    client = createRunlaterClient(server.url);
    use(server, client);
  });
  afterAll(async () => {
    client?.close();
    await server?.stop();
  });
}

let counter = 0;
/** A queue name no other test uses (letters, digits, underscores). */
export function uniqueQueue(prefix: string): string {
  return `${prefix}_${process.pid}_${++counter}_${Math.random().toString(36).slice(2, 7)}`;
}

/** Retries `check` until it stops throwing, or rethrows its last error after timeoutMs. */
export async function eventually<T>(check: () => T | Promise<T>, timeoutMs = 5_000, intervalMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}

export async function getJob(client: RunlaterClient, id: string): Promise<Job> {
  const { jobs } = await client.jobs.getJobs({ jobIds: [id] });
  const job = jobs[0];
  if (!job) throw new Error(`job ${id} not found`);
  return job;
}

/** Waits until the job is in `state` and returns it. */
export function jobInState(client: RunlaterClient, id: string, state: JobState, timeoutMs = 5_000): Promise<Job> {
  return eventually(async () => {
    const job = await getJob(client, id);
    if (job.state !== state) throw new Error(`job ${id} is ${JobState[job.state]}, waiting for ${JobState[state]}`);
    return job;
  }, timeoutMs);
}

/** A promise with its resolve function, for handlers that block until a test lets them go. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
