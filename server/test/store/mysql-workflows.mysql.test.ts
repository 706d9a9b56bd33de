/**
 * MySQL internals of workflows the shared suite cannot see: instance lists and retention
 * read the indexes migration 0008 made for them, without sorting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MysqlStore, openMysqlStore } from "../../src/store/mysql/mysql-store.js";
import * as sql from "../../src/store/mysql/queries.js";
import { Shard } from "../../src/store/mysql/shard.js";
import { T0 } from "../storetest/fixtures.js";
import { dropDatabases, explain as explainOn, freshDatabaseUrl } from "./mysql-harness.js";

const url = freshDatabaseUrl("wfplans");
let store: MysqlStore;
let shard: Shard;
const STATES = ["running", "succeeded", "failed", "aborted", "cancelled"];

const explain = (statement: string, params: unknown[]) => explainOn(shard, statement, params);

beforeAll(async () => {
  store = await openMysqlStore([url], { connectionLimit: 2 });
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

afterAll(() => dropDatabases(store, shard));

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
