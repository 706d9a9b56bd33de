/**
 * Redis internals of workflows the shared suite cannot see: an instance's list entries
 * follow its state and go with it, and a store of several shards refuses workflow writes
 * (docs/workflows.md: an instance and its jobs must sit where one script reaches them).
 */
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { RunlaterError } from "../../src/domain/errors.js";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance } from "../../src/domain/workflow-transitions.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { createQueue, get, handOut, insert, T0 } from "../storetest/fixtures.js";
import { cleanup, keysOf, openTestStore, shardUrls } from "./redis-helpers.js";

afterAll(cleanup);

/** The prefix a test store was opened with (private; read for key inspection only). */
const prefixOf = (store: RedisStore) => (store as unknown as { keys: { prefix: string } }).keys.prefix;

const def = (queue: string): WorkflowDef => ({
  name: "flow",
  version: 1,
  jobs: [{ name: "a", queue, inputs: [], onFailure: "abort", body: new Uint8Array(), priority: 0, attemptsAllowed: 0 }],
});
const instance = (queue: string, id: string, now = T0) =>
  startInstance(def(queue), { id, now, keepOpen: false, external: [] }, () => "").instance;

/** Every list member and retention entry under the store's {wf} tag, by key. */
async function wfEntries(store: RedisStore): Promise<Record<string, string[]>> {
  const [url] = shardUrls(1);
  const client = new Redis(url!);
  try {
    const entries: Record<string, string[]> = {};
    for (const key of (await keysOf(url!, prefixOf(store))).filter((k) => k.includes("{wf}")).sort()) {
      const name = key.slice(prefixOf(store).length + 1);
      entries[name] = (await client.type(key)) === "zset" ? await client.zrange(key, "0", "-1") : ["(hash)"];
    }
    return entries;
  } finally {
    client.disconnect();
  }
}

describe("redis workflows", () => {
  it("lists an instance by workflow and state, moves it when it ends, and retention takes every entry with it", async () => {
    const store = await openTestStore(1);
    const queue = await createQueue(store);
    const ws = store.workflows;
    const [a, b] = [instance(queue, "ia"), instance(queue, "ib", T0 + 1)];
    await ws.instanceInsert({ instance: a, jobs: [], now: T0 });
    await ws.instanceInsert({ instance: b, jobs: [], now: T0 });
    const ended = { ...a, rev: a.rev + 1, state: "succeeded" as const, endedAt: T0 + 5 };
    expect(
      await ws.instanceApply({ id: a.id, rev: a.rev, instance: ended, jobs: [], cancel: [], now: T0 + 5 }),
    ).toEqual({
      applied: true,
    });
    const member = (createdAt: number, id: string) => `${String(createdAt).padStart(16, "0")}${id}`;
    expect(await wfEntries(store)).toEqual({
      "{wf}:ended": ["ia"],
      "{wf}:i:ia": ["(hash)"],
      "{wf}:i:ib": ["(hash)"],
      "{wf}:list": [member(T0, "ia"), member(T0 + 1, "ib")],
      "{wf}:list:s:running": [member(T0 + 1, "ib")],
      "{wf}:list:s:succeeded": [member(T0, "ia")],
      "{wf}:list:w:flow": [member(T0, "ia"), member(T0 + 1, "ib")],
      "{wf}:list:ws:running:flow": [member(T0 + 1, "ib")],
      "{wf}:list:ws:succeeded:flow": [member(T0, "ia")],
    });
    expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 6, limit: 10 })).toBe(1);
    expect(await wfEntries(store)).toEqual({
      "{wf}:i:ib": ["(hash)"],
      "{wf}:list": [member(T0 + 1, "ib")],
      "{wf}:list:s:running": [member(T0 + 1, "ib")],
      "{wf}:list:w:flow": [member(T0 + 1, "ib")],
      "{wf}:list:ws:running:flow": [member(T0 + 1, "ib")],
    });
  });

  it("a store of several shards refuses workflow writes, still reads, and still answers a workflow job's ACK", async () => {
    const store = await openTestStore(2);
    const queue = await createQueue(store);
    const refused = async (call: Promise<unknown>) =>
      call.then(
        () => "accepted",
        (err: unknown) => err instanceof RunlaterError && `${err.code} ${err.reason} ${err.message}`,
      );
    const ws = store.workflows;
    const i = instance(queue, "i2");
    expect(await refused(ws.workflowInsert({ def: def(queue), now: T0 }))).toMatch(
      /^failed_precondition UNSUPPORTED workflows need a Redis store of one shard; this one has 2/,
    );
    expect(await refused(ws.instanceInsert({ instance: i, jobs: [], now: T0 }))).toMatch(/^failed_precondition/);
    expect(await refused(ws.instanceApply({ id: "i2", rev: 0, jobs: [], cancel: [], now: T0 }))).toMatch(
      /^failed_precondition/,
    );
    expect(await ws.workflowGet({ name: "flow" })).toBeUndefined();
    expect(await ws.instanceList({ limit: 10 })).toEqual([]);
    // A workflow job's run (say, written before a shard was added) is still never completed by the plain ACK.
    const workflow = encodeJobContext({
      workflow: "flow",
      version: 1,
      instanceId: "i2",
      job: "a",
      run: 1,
      triggeredBy: [],
    });
    const [id] = await insert(store, queue, [{ workflow }]);
    const [job] = await handOut(store, queue);
    const [ack] = await store.jobCompleteMany({
      items: [{ id: id!, claimToken: job!.claimToken, customStatus: "" }],
      now: T0,
    });
    expect(ack).toEqual({ outcome: "workflow", workflow });
    expect((await get(store, id!))?.state).toBe("running");
  });
});
