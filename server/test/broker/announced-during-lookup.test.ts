import { expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.js";
import { ManualClock } from "../../src/domain/clock.js";
import { newJobId } from "../../src/domain/job-id.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { silentLogger } from "../../src/log.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

/**
 * A memory store whose next-due lookups read at once but answer only when the gate opens:
 * a slow store (a Redis round trip) whose answer predates jobs inserted meanwhile.
 */
class LateLookupStore extends MemoryStore {
  gate: Promise<void> | undefined;
  override async jobNextDueAt(p: Parameters<MemoryStore["jobNextDueAt"]>[0]) {
    const next = await super.jobNextDueAt(p);
    await this.gate;
    return next;
  }
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

it("hands out a job announced while the refill before it was still looking up the next due time", async () => {
  const clock = new ManualClock(1_000_000);
  const store = new LateLookupStore();
  await store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: clock.now() });
  const broker = new Broker({ store, clock, log: silentLogger, owner: "a", bufferSize: 10, leaseTtlMs: 30_000 });
  const enqueue = async () => {
    const now = clock.now();
    const job = {
      id: newJobId("q", 0, now),
      queue: "q",
      partition: 0,
      priority: 1,
      body: new Uint8Array(),
      runAfter: now,
      attemptsAllowed: 3,
      customStatus: "",
      createdAt: now,
      idempotencyKey: "",
      orderingKey: "",
    };
    await store.jobInsertMany({ jobs: [job], now });
    broker.notify("q", 0, now, 1);
  };
  const first = broker.dequeue({ queue: "q", limit: 1, waitMs: 60_000 });
  await turns(5); // waiting: the queue is empty
  let open!: () => void;
  store.gate = new Promise((resolve) => (open = resolve));
  await enqueue(); // claimed by a refill that then looks up the next due time (held at the gate)
  expect(await first).toHaveLength(1);

  const second = broker.dequeue({ queue: "q", limit: 1, waitMs: 60_000 });
  await turns(5);
  await enqueue(); // announced while that lookup is out; no other job or timer follows
  open();
  const got = await Promise.race([second, turns(50).then(() => "still waiting" as const)]);
  expect(got).toHaveLength(1);
  await broker.stop();
});
