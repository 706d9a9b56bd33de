import { describe, expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.js";
import { ManualClock } from "../../src/domain/clock.js";
import { newJobId } from "../../src/domain/job-id.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { silentLogger } from "../../src/log.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

const TTL = 3000;

/** A memory store whose leaseAcquire can be held at the door, to order it against other calls. */
class GatedStore extends MemoryStore {
  gate: Promise<void> | undefined;
  override async leaseAcquire(p: Parameters<MemoryStore["leaseAcquire"]>[0]) {
    await this.gate;
    return super.leaseAcquire(p);
  }
}

describe("partition hand-over", () => {
  it("lets go of a partition whose renewal was in flight when the assignment moved it away", async () => {
    const clock = new ManualClock(1_000_000);
    const store = new GatedStore();
    await store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: clock.now() });
    const now = clock.now();
    await store.jobInsertMany({
      jobs: [1, 2].map(() => ({
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
      })),
      now,
    });
    let mine = true;
    const broker = new Broker({
      store,
      clock,
      log: silentLogger,
      owner: "a",
      bufferSize: 10,
      leaseTtlMs: TTL,
      ownership: { owns: () => mine },
    });
    broker.start();
    expect(await broker.dequeue({ queue: "q", limit: 1, waitMs: 0 })).toHaveLength(1); // owns p0, one job buffered

    // The periodic renewal (checked every TTL/3) reaches the store late ...
    let open!: () => void;
    store.gate = new Promise((resolve) => (open = resolve));
    await clock.advance((2 * TTL) / 3); // the renewal at 2/3 of the lease goes to the store
    // ... and meanwhile another broker joined and the partition is now its.
    mine = false;
    broker.rebalance();
    await new Promise((r) => setTimeout(r, 10));
    open();
    await new Promise((r) => setTimeout(r, 10));

    // The new owner gets the partition at once, with the buffered job back to pending.
    const lease = await store.leaseAcquire({ queue: "q", partition: 0, owner: "b", ttlMs: TTL, now: clock.now() });
    expect(lease).toBeDefined();
    const claimed = await store.jobClaimMany({
      queue: "q",
      partition: 0,
      epoch: lease!.epoch,
      limit: 10,
      now: clock.now(),
    });
    expect(claimed).toHaveLength(1);
    await broker.stop();
  });
});
