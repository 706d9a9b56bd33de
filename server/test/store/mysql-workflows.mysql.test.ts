/**
 * MySQL internals of workflows the shared suite cannot see: instance lists and retention
 * read the indexes migration 0008 made for them (no sort), and a store of several shards
 * refuses workflow writes (docs/workflows.md: an instance and its jobs must sit where one
 * transaction reaches them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunlaterError } from "../../src/domain/errors.js";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance } from "../../src/domain/workflow-transitions.js";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import * as sql from "../../src/store/mysql/queries.js";
import { Shard, select } from "../../src/store/mysql/shard.js";
import { createQueue, get, handOut, insert, T0 } from "../storetest/fixtures.js";
import { dropDatabases, freshDatabaseUrl } from "./mysql-harness.js";

const url = freshDatabaseUrl("wfplans");
const shardUrls = [freshDatabaseUrl("wfshards"), freshDatabaseUrl("wfshards")];
let store: MysqlStore;
let sharded: MysqlStore;
let shard: Shard;
const STATES = ["running", "succeeded", "failed", "aborted", "cancelled"];

interface PlanRow {
  type: string | null;
  key: string | null;
  Extra: string | null;
}

async function explain(statement: string, params: unknown[]): Promise<PlanRow[]> {
  return shard.session((c) => select<PlanRow>(c, `EXPLAIN ${statement}`, params as never));
}

beforeAll(async () => {
  store = await openMysqlStore([url], { connectionLimit: 2 });
  sharded = await openMysqlStore(shardUrls, { connectionLimit: 2 });
  shard = new Shard(0, url, { retryForMs: 5000, connectionLimit: 1 });
  // 4,000 instances of 8 workflows in every state, as a busy store's history holds them.
  await shard.session(async (c) => {
    for (let batch = 0; batch < 4; batch++) {
      const rows = Array.from({ length: 1000 }, (_, k) => {
        const i = batch * 1000 + k;
        const state = STATES[i % 5]!;
        return [`wf_${i}`, `flow${i % 8}`, state, 1, T0 + i, state === "running" ? null : T0 + i + 10, "{}"];
      });
      await c.query(
        `INSERT INTO workflow_instances (id, workflow, state, rev, created_at, ended_at, instance) VALUES ?`,
        [rows],
      );
    }
    await c.query("ANALYZE TABLE workflow_instances");
  });
}, 60_000);

afterAll(() => dropDatabases(store, sharded, shard));

describe("mysql workflow query plans", () => {
  it("lists instances newest first from the index of its filters, from a cursor, without sorting", async () => {
    for (const [workflow, state, index] of [
      [false, false, "instances_created"],
      [true, false, "instances_workflow"],
      [false, true, "instances_state"],
      [true, true, "instances_workflow_state"],
    ] as const) {
      for (const after of [false, true]) {
        const params = [
          ...(workflow ? ["flow3"] : []),
          ...(state ? ["succeeded"] : []),
          ...(after ? [T0 + 2000, T0 + 2000, "wf_2000"] : []),
          50,
        ];
        const [row] = await explain(sql.instanceList(workflow, state, after), params);
        expect(row, `${workflow} ${state} ${after}`).toMatchObject({ key: index });
        expect(row!.Extra ?? "").not.toMatch(/filesort/);
      }
    }
  });

  it("finds ended instances for retention in instances_ended, oldest first, and locks an instance by its primary key", async () => {
    const [ended] = await explain(sql.INSTANCES_ENDED, [T0 + 500, 100]);
    expect(ended).toMatchObject({ type: "range", key: "instances_ended" });
    expect(ended!.Extra ?? "").not.toMatch(/filesort/);
    expect((await explain(sql.INSTANCE_REV_LOCK, ["wf_7"]))[0]).toMatchObject({ key: "PRIMARY" });
  });
});

describe("mysql workflows on several shards", () => {
  it("refuses workflow writes, still reads, and still answers a workflow job's ACK", async () => {
    const queue = await createQueue(sharded);
    const def: WorkflowDef = {
      name: "flow",
      version: 1,
      jobs: [
        { name: "a", queue, inputs: [], onFailure: "abort", body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
      ],
    };
    const instance = startInstance(def, { id: "i2", now: T0, keepOpen: false, external: [] }, () => "").instance;
    const refused = async (call: Promise<unknown>) =>
      call.then(
        () => "accepted",
        (err: unknown) => err instanceof RunlaterError && `${err.code} ${err.reason} ${err.message}`,
      );
    const ws = sharded.workflows;
    expect(await refused(ws.workflowInsert({ def, now: T0 }))).toMatch(
      /^failed_precondition UNSUPPORTED workflows need a MySQL store of one shard; this one has 2/,
    );
    expect(await refused(ws.instanceInsert({ instance, jobs: [], now: T0 }))).toMatch(/^failed_precondition/);
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
    const [id] = await insert(sharded, queue, [{ workflow }]);
    const [job] = await handOut(sharded, queue);
    const [ack] = await sharded.jobCompleteMany({
      items: [{ id: id!, claimToken: job!.claimToken, customStatus: "" }],
      now: T0,
    });
    expect(ack).toEqual({ outcome: "workflow", workflow });
    expect((await get(sharded, id!))?.state).toBe("running");
  });
});
