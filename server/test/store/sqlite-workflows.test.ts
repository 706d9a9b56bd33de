/**
 * SQLite internals of workflows and schedules the shared suites cannot see: the statements
 * of instanceList, instanceDeleteEnded and scheduleDue read the indexes made for them
 * (never a sort, never the whole table); retention deletes the oldest ends first, a limit
 * at a time; workflowList reads the latest version of every name a chunk at a time.
 *
 * The plans are those of the statements the operations really run: the operations
 * (workflows.ts, schedules.ts) are run here on a SqliteContext over a connection of this
 * thread, which records every statement they prepare.
 */
import type { DatabaseSync, StatementSync } from "node:sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance } from "../../src/domain/workflow-transitions.js";
import { SqliteContext } from "../../src/store/sqlite/context.js";
import { openDatabase } from "../../src/store/sqlite/open-database.js";
import * as schedules from "../../src/store/sqlite/schedules.js";
import type { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { WORKFLOW_LIST_CHUNK } from "../../src/store/sqlite/workflow-store.js";
import * as workflows from "../../src/store/sqlite/workflows.js";
import { T0 } from "../storetest/fixtures.js";
import { SqliteFiles } from "./sqlite-harness.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

const STATES = ["running", "succeeded", "failed", "aborted", "cancelled"] as const;

describe("sqlite workflow and schedule query plans", () => {
  let db: DatabaseSync;
  let close: () => void;
  let ctx: SqliteContext;
  const prepared: string[] = [];

  beforeAll(() => {
    const opened = openDatabase({ path: files.path(), synchronous: "normal" });
    db = opened.db;
    close = opened.close;
    // 4,000 instances of 8 workflows in every state and 2,000 schedules (a quarter never
    // due), as a busy store's history holds them; then the planner's statistics.
    db.exec("BEGIN");
    const instance = db.prepare(
      "INSERT INTO workflow_instances (id, workflow, state, rev, created_at, ended_at, instance) VALUES (?, ?, ?, 1, ?, ?, '{}')",
    );
    for (let i = 0; i < 4000; i++) {
      const state = STATES[i % 5]!;
      instance.run(`wf_${i}`, `flow${i % 8}`, state, T0 + i, state === "running" ? null : T0 + i + 10);
    }
    const schedule = db.prepare("INSERT INTO schedules (name, rev, next_fire_at, schedule) VALUES (?, 1, ?, '{}')");
    for (let i = 0; i < 2000; i++) schedule.run(`s_${i}`, i % 4 === 0 ? 0 : T0 + i * 1000);
    db.exec("COMMIT");
    db.exec("ANALYZE");
    // The operations' context over this connection, noting each statement they prepare.
    const noting = new Proxy(db, {
      get(target, key) {
        if (key === "prepare")
          return (sql: string): StatementSync => {
            prepared.push(sql);
            return target.prepare(sql);
          };
        const value = Reflect.get(target, key) as unknown;
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    ctx = new SqliteContext(noting);
  });
  afterAll(() => close());

  /** What the operation prepares (each statement once: a context prepares a text once). */
  function statementsOf(run: () => void): string[] {
    const from = prepared.length;
    run();
    return prepared.slice(from);
  }

  /** EXPLAIN QUERY PLAN of a statement, its lines joined (parameters need no values to be planned). */
  function plan(sql: string): string {
    const rows = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>;
    return rows.map((r) => r.detail).join("\n");
  }

  it("lists instances newest first from the index of its filters, from a cursor, without sorting", () => {
    for (const [workflow, state, index] of [
      [undefined, undefined, "instances_created"],
      ["flow3", undefined, "instances_workflow"],
      [undefined, "succeeded", "instances_state"],
      ["flow3", "succeeded", "instances_workflow_state"],
    ] as const) {
      for (const after of [undefined, { createdAt: T0 + 2000, id: "wf_2000" }]) {
        const [sql] = statementsOf(() => workflows.instanceList(ctx, { workflow, state, after, limit: 50 }));
        const p = plan(sql!);
        expect(p, `${workflow} ${state} ${after !== undefined}: ${sql}`).toMatch(new RegExp(`USING INDEX ${index}\\b`));
        expect(p).not.toContain("TEMP B-TREE");
        if (after) expect(p).toContain("(created_at,id)<(?,?))"); // the cursor is a range of the index
      }
    }
    // And the page is right: newest first, ties by id descending, strictly after the cursor.
    const page = workflows.instanceList(ctx, {
      workflow: "flow3",
      limit: 3,
      after: { createdAt: T0 + 2003, id: "wf_2003" },
    });
    expect(page).toHaveLength(3);
  });

  it("finds ended instances for retention in instances_ended, oldest first", () => {
    const [sql] = statementsOf(() => workflows.instanceDeleteEnded(ctx, { endedBefore: T0, limit: 10 }));
    const p = plan(sql!);
    expect(p).toContain("USING COVERING INDEX instances_ended (ended_at<?)");
    expect(p).not.toContain("TEMP B-TREE");
  });

  it("answers due schedules and the next fire time from schedules_due, without sorting", () => {
    const sqls = statementsOf(() => schedules.scheduleDue(ctx, { now: T0 + 500_000, limit: 100 }));
    expect(sqls).toHaveLength(2);
    for (const sql of sqls) {
      const p = plan(sql);
      expect(p, sql).toMatch(/USING (COVERING )?INDEX schedules_due/);
      expect(p).not.toContain("TEMP B-TREE");
    }
    const { due, nextDueAt } = schedules.scheduleDue(ctx, { now: T0 + 4000, limit: 100 });
    expect(due).toHaveLength(3); // s_1, s_2, s_3 (s_0 and s_4 are never due / due later)
    expect(nextDueAt).toBe(T0 + 5000);
  });
});

describe("sqlite workflows: retention and the list of definitions", () => {
  let store: SqliteStore;
  beforeAll(async () => {
    store = await files.open();
  });

  it("deletes ended instances oldest end first, at most `limit` per call, never a running one", async () => {
    const ws = store.workflows;
    const def: WorkflowDef = { name: "ret", version: 1, jobs: [] };
    const ends = [T0 + 50, T0 + 10, T0 + 40, T0 + 20, T0 + 30];
    for (const [i, endedAt] of ends.entries()) {
      const { instance } = startInstance(def, { id: `ret_${i}`, now: T0, keepOpen: true, external: [] }, () => "");
      await ws.instanceInsert({ instance: { ...instance, state: "succeeded", endedAt }, jobs: [], now: T0 });
    }
    const { instance: running } = startInstance(
      def,
      { id: "ret_run", now: T0, keepOpen: true, external: [] },
      () => "",
    );
    await ws.instanceInsert({ instance: running, jobs: [], now: T0 });
    const left = async () => (await ws.instanceList({ workflow: "ret", limit: 100 })).map((i) => i.id).sort();

    expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 100, limit: 2 })).toBe(2);
    expect(await left()).toEqual(["ret_0", "ret_2", "ret_4", "ret_run"]); // ends +10 and +20 went
    expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 40, limit: 100 })).toBe(1); // +30
    expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 1e9, limit: 100 })).toBe(2);
    expect(await left()).toEqual(["ret_run"]);
  });

  it("lists the latest version of every workflow by name, across chunks", async () => {
    const ws = store.workflows;
    const n = WORKFLOW_LIST_CHUNK * 2 + 7;
    const names = Array.from({ length: n }, (_, i) => `list_${String(i).padStart(4, "0")}`);
    const def = (name: string, version: number): WorkflowDef => ({
      name,
      version,
      jobs: [
        {
          name: "a",
          queue: "q",
          inputs: [],
          onFailure: "abort",
          body: Uint8Array.of(version),
          priority: 0,
          attemptsAllowed: 0,
        },
      ],
    });
    // Every name in versions 1 and 2, and every third one in 3 too.
    await Promise.all(
      names.flatMap((name, i) =>
        [1, 2, ...(i % 3 === 0 ? [3] : [])].map((v) => ws.workflowInsert({ def: def(name, v), now: T0 + v })),
      ),
    );
    const listed = (await ws.workflowList()).filter((w) => w.def.name.startsWith("list_"));
    expect(listed.map((w) => w.def.name)).toEqual(names);
    expect(listed.map((w) => w.def.version)).toEqual(names.map((_, i) => (i % 3 === 0 ? 3 : 2)));
    expect(listed[3]).toEqual({ def: def(names[3]!, 3), createdAt: T0 + 3 });
  });
});
