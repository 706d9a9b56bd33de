/**
 * Redis internals of workflows the shared suite cannot see: an instance's list entries
 * follow its state, and go with it.
 */
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance } from "../../src/domain/workflow-transitions.js";
import type { RedisStore } from "../../src/store/redis/redis-store.js";
import { createQueue, T0 } from "../storetest/fixtures.js";
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
});
