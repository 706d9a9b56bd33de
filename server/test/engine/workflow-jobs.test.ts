/**
 * The queue jobs of a workflow's runs (engine/workflows.ts), on the memory store: every
 * run an instance records names the queue job the store holds, also when the job had to
 * be placed on another partition than the one picked while deciding.
 */
import { describe, expect, it } from "vitest";
import { decodeJobContext } from "../../src/domain/workflow-codec.js";
import { PartitionPicker } from "../../src/engine/partition-picker.js";
import { QueueCache } from "../../src/engine/queue-cache.js";
import { Workflows } from "../../src/engine/workflows.js";
import type { QueueRecord } from "../../src/store/store.js";
import { setup } from "./harness.js";

/**
 * A cache whose unchecked view (peek, which places runs while deciding) still holds the
 * queue as it was with more partitions, while a fresh read (get) has it with fewer: a
 * queue deleted and created again with fewer partitions meanwhile, through another node.
 */
class StaleCache extends QueueCache {
  stale?: QueueRecord;

  override peek(name: string): QueueRecord | undefined {
    return this.stale ?? super.peek(name);
  }
}

describe("a run's queue job on a partition the queue no longer has", () => {
  it("is placed on one it has, and the instance's run names that job", async () => {
    const h = await setup({ queue: { partitions: 1 } });
    const record = (await h.store.queueGet({ name: h.queue }))!;
    const queues = new StaleCache(h.store, h.clock);
    queues.stale = { ...record, config: { ...record.config, partitions: 4 } };
    const workflows = new Workflows({
      store: h.store,
      clock: h.clock,
      broker: h.broker,
      queues,
      partitions: new PartitionPicker(),
    });
    const job = (name: string) => ({
      name,
      queue: h.queue,
      inputs: [],
      onFailure: "abort" as const,
      body: new Uint8Array(),
      priority: 0,
      attemptsAllowed: 0,
    });
    // Two first runs: round-robin over the stale 4 partitions places the second on partition 1.
    await workflows.apply({ name: "wf_moved", jobs: [job("a"), job("b")] });
    const instance = await workflows.start({ workflow: "wf_moved", events: [], keepOpen: false });

    const ids = ["a", "b"].map((name) => instance.jobs[name]!.runs[0]!.queueJobId);
    expect(ids.every((id) => id.startsWith(`${h.queue}.0.`))).toBe(true);
    const stored = await h.store.jobGetMany({ ids, bodies: false });
    expect(stored.map((j) => j && decodeJobContext(j.workflow!).job)).toEqual(["a", "b"]);
    expect((await workflows.instance(instance.id)).jobs.b!.runs[0]!.queueJobId).toBe(ids[1]);
  });
});
