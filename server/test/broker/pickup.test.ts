/**
 * Pickup latency (issue 28): a job enqueued while a long poll waits reaches it without
 * waiting for another announcement, a timer or an extra store round trip.
 */
import { expect, it } from "vitest";
import { Broker } from "../../src/broker/broker.js";
import { ManualClock } from "../../src/domain/clock.js";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { silentLogger } from "../../src/log.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { newJob } from "../storetest/fixtures.js";

/**
 * A memory store with doors: its n-th claim waits for claimGates[n], when there is one, and
 * its next-due lookups read at once but answer only once lookupGate opens (a slow store, a
 * Redis round trip, whose answer predates jobs inserted meanwhile).
 */
class GatedStore extends MemoryStore {
  readonly claimGates: Array<Promise<void> | undefined> = [];
  private claims = 0;
  /** The store calls that hand jobs out, in order: "claim+start" (a claim that hands out) or "start". */
  readonly handOuts: string[] = [];
  lookupGate: Promise<void> | undefined;
  override async jobClaimMany(p: Parameters<MemoryStore["jobClaimMany"]>[0]) {
    await this.claimGates[this.claims++];
    if (p.start) this.handOuts.push("claim+start");
    return super.jobClaimMany(p);
  }
  override async jobStartMany(p: Parameters<MemoryStore["jobStartMany"]>[0]) {
    this.handOuts.push("start");
    return super.jobStartMany(p);
  }
  override async jobNextDueAt(p: Parameters<MemoryStore["jobNextDueAt"]>[0]) {
    const next = await super.jobNextDueAt(p);
    await this.lookupGate;
    return next;
  }
}

function gate(): { wait: Promise<void>; open: () => void } {
  let open!: () => void;
  return { wait: new Promise((resolve) => (open = resolve)), open };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

/** A broker over a GatedStore with queue q, and an enqueue that announces like the engine's. */
async function setup() {
  const clock = new ManualClock(1_000_000);
  const store = new GatedStore();
  await store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: clock.now() });
  const broker = new Broker({ store, clock, log: silentLogger, owner: "a", bufferSize: 10, leaseTtlMs: 30_000 });
  const enqueue = async () => {
    const job = newJob("q", {}, clock.now());
    await store.jobInsertMany({ jobs: [job], now: clock.now() });
    broker.notify("q", 0, job.runAfter, job.priority);
    return job.id;
  };
  return { store, broker, enqueue };
}

it("hands out a job announced while the refill before it was still looking up the next due time", async () => {
  const { store, broker, enqueue } = await setup();
  const first = broker.dequeue({ queue: "q", limit: 1, waitMs: 60_000 });
  await turns(5); // waiting: the queue is empty
  const lookup = gate();
  store.lookupGate = lookup.wait;
  await enqueue(); // claimed by a refill that then looks up the next due time (held at the gate)
  expect(await first).toHaveLength(1);

  const second = broker.dequeue({ queue: "q", limit: 1, waitMs: 60_000 });
  await turns(5);
  await enqueue(); // announced while that lookup is out; no other job or timer follows
  lookup.open();
  const got = await Promise.race([second, turns(50).then(() => "still waiting" as const)]);
  expect(got).toHaveLength(1);
  await broker.stop();
});

it("a long poll woken by claimed jobs hands them out without claiming again first", async () => {
  const { store, broker, enqueue } = await setup();
  const waiting = broker.dequeue({ queue: "q", limit: 10, waitMs: 60_000 });
  await turns(5); // claim 0 found nothing: waiting
  const [first, later] = [gate(), gate()];
  store.claimGates[1] = first.wait;
  store.claimGates[2] = later.wait;
  const id = await enqueue(); // claim 1 starts (held) ...
  await enqueue(); // ... and a second job is announced while it runs: the store may hold more
  first.open();
  // The waiter hands out what claim 1 brought; claim 2 (held) fetches the rest behind it.
  const got = await Promise.race([waiting, turns(50).then(() => "still waiting" as const)]);
  expect(got).not.toBe("still waiting");
  expect((got as Array<{ id: string }>).map((j) => j.id)).toContain(id);
  later.open();
  await broker.stop();
});

it("serves a long poll woken by a job on an empty queue with one store call that claims and hands out", async () => {
  const { store, broker, enqueue } = await setup();
  const waiting = broker.dequeue({ queue: "q", limit: 10, waitMs: 60_000 });
  await turns(5); // waiting: the queue is empty
  store.handOuts.length = 0;
  const id = await enqueue();
  const got = await Promise.race([waiting, turns(50).then(() => "still waiting" as const)]);
  expect((got as Array<{ id: string; state: string }>).map((j) => [j.id, j.state])).toEqual([[id, "running"]]);
  // One store call between the announcement and the hand-out: no claim into the buffer, then a start.
  expect(store.handOuts).toEqual(["claim+start"]);
  expect(await broker.bufferedCount("q")).toBe(0);
  await broker.stop();
});

it("claims no more than it hands out: jobs left due stay in the store for the next call's claim", async () => {
  const { store, broker, enqueue } = await setup();
  expect(await broker.dequeue({ queue: "q", limit: 1, waitMs: 0 })).toEqual([]); // takes the partition's lease
  store.handOuts.length = 0;
  const ids = [await enqueue(), await enqueue(), await enqueue()];
  expect((await broker.dequeue({ queue: "q", limit: 1, waitMs: 0 })).map((j) => j.id)).toEqual([ids[0]]);
  expect(await broker.bufferedCount("q")).toBe(0);
  expect((await broker.dequeue({ queue: "q", limit: 10, waitMs: 0 })).map((j) => j.id)).toEqual(ids.slice(1));
  expect(store.handOuts).toEqual(["claim+start", "claim+start"]);
  await broker.stop();
});
