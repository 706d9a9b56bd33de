/**
 * A producer's burst on one HTTP/2 connection: the README's client (createRunlaterClient,
 * HTTP/2) sending 20,000 Enqueue calls at once to a server in this process. Node's default
 * cap on an HTTP/2 session's memory (10 MB) made the server reset some of those streams
 * with ENHANCE_YOUR_CALM, which the client reported as `internal` (74 of 10,000 here).
 */
import { createRunlaterClient } from "@runlater/sdk";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ store: new MemoryStore(), port: 0 });
});
afterAll(async () => {
  await server.stop();
});

it("serves 20,000 Enqueue calls sent at once on one connection, none reset", { timeout: 60_000 }, async () => {
  const client = createRunlaterClient(server.url);
  try {
    await client.createQueue("burst");
    const calls = await Promise.allSettled(
      Array.from({ length: 20_000 }, (_, i) => client.enqueue("burst", `job ${i}`)),
    );
    const failures = calls.filter((c) => c.status === "rejected").map((c) => String(c.reason));
    expect(failures.slice(0, 3)).toEqual([]);
    expect((await client.jobs.countJobs({ queue: "burst" })).count).toBe(20_000n);
  } finally {
    client.close();
  }
});
