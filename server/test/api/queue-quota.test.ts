/** The cap on queues (`runlater serve --max-queues`, docs/limits.md): a clear error at the cap, never a half-made queue. */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { afterEach, expect, it } from "vitest";
import { limits } from "../../src/domain/limits.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { refusal } from "./refusal.js";

let server: RunningServer | undefined;
afterEach(() => server?.stop());

async function queuesClient(maxQueues: number) {
  server = await startServer({ store: new MemoryStore(), port: 0, maxQueues });
  return createClient(QueueService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
}

it("refuses the queue past --max-queues with resource_exhausted naming the cap, and makes room again after a delete", async () => {
  const queues = await queuesClient(3);
  for (const name of ["a", "b", "c"]) expect((await queues.createQueue({ name })).created).toBe(true);
  const err = await refusal(queues.createQueue({ name: "d" }));
  expect(err.code).toBe(Code.ResourceExhausted);
  expect(err.message).toContain('queue "d" would be queue 4 of at most 3 (runlater serve --max-queues)');
  expect((await queues.listQueues({})).queues.map((q) => q.name).sort()).toEqual(["a", "b", "c"]);
  // At the cap, creating a queue that exists still answers it (create is idempotent).
  expect((await queues.createQueue({ name: "b" })).created).toBe(false);
  await queues.deleteQueue({ name: "a" });
  expect((await queues.createQueue({ name: "d" })).created).toBe(true);
  expect((await refusal(queues.createQueue({ name: "e" }))).code).toBe(Code.ResourceExhausted);
});

it("at the cap, counts again before refusing: a queue another node deleted makes room", async () => {
  const store = new MemoryStore();
  server = await startServer({ store, port: 0, maxQueues: 2 });
  const queues = createClient(QueueService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
  await queues.createQueue({ name: "a" });
  await queues.createQueue({ name: "b" });
  // Another node's delete, straight in the shared store: this node's cached count still says 2.
  await store.queueDelete({ name: "a" });
  expect((await queues.createQueue({ name: "c" })).created).toBe(true);
  expect((await refusal(queues.createQueue({ name: "d" }))).code).toBe(Code.ResourceExhausted);
});

it("takes --max-queues from 1 to its bound, and refuses anything else at start", async () => {
  for (const bad of [0, -1, 1.5, limits.queuesMaxLimit + 1])
    await expect(startServer({ store: new MemoryStore(), port: 0, maxQueues: bad })).rejects.toThrow(
      `max queues is ${bad}; use a whole number from 1 to ${limits.queuesMaxLimit}`,
    );
  server = await startServer({ store: new MemoryStore(), port: 0, maxQueues: limits.queuesMaxLimit });
});
