/**
 * Store.workflows (docs/workflows.md): what every store that keeps workflows must do. The
 * domain decides every transition; these cases pin what the store applies, and that it
 * applies it atomically under the claim fence of the ACK and the instance's revision.
 */
import { describe, expect, it } from "vitest";
import { encodeJobContext } from "../../src/domain/workflow-codec.js";
import type { WorkflowDef } from "../../src/domain/workflow-definition.js";
import { startInstance, type WorkflowInstance } from "../../src/domain/workflow-transitions.js";
import type { Store, WorkflowStore } from "../../src/store/store.js";
import { createQueue, get, handOut, insert, lease, newJob, T0 } from "./fixtures.js";
import type { OpenStore } from "./index.js";

let counter = 0;

function definition(queue: string, name = `wf${process.pid}_${++counter}`): WorkflowDef {
  return {
    name,
    version: 1,
    jobs: [
      { name: "a", queue, inputs: [], onFailure: "abort", body: new Uint8Array([7]), priority: 0, attemptsAllowed: 0 },
      {
        name: "b",
        queue,
        inputs: [{ job: "a" }],
        onFailure: "continue",
        body: new Uint8Array(),
        priority: 0,
        attemptsAllowed: 0,
      },
    ],
  };
}

const context = (instanceId: string, job = "a", run = 1) =>
  encodeJobContext({ workflow: "w", version: 1, instanceId, job, run, triggeredBy: [] });

/** A started instance of `def` (its first run's queue job inserted), and that job, running. */
async function started(store: Store, ws: WorkflowStore, queue: string) {
  const def = definition(queue);
  const t = startInstance(
    def,
    { id: `i${process.pid}_${++counter}`, now: T0, keepOpen: false, external: [] },
    () => "",
  );
  const job = newJob(queue, { workflow: context(t.instance.id) });
  t.instance.jobs.a!.runs[0]!.queueJobId = job.id;
  expect(await ws.instanceInsert({ instance: t.instance, jobs: [job], now: T0 })).toBe(true);
  const [running] = await handOut(store, queue);
  expect(running!.id).toBe(job.id);
  return { def, instance: t.instance, job: running! };
}

const next = (instance: WorkflowInstance): WorkflowInstance => ({ ...instance, rev: instance.rev + 1 });

export function exerciseWorkflows(open: OpenStore): void {
  async function setup() {
    const store = await open();
    if (!store.workflows) throw new Error(`the ${store.name} store offers no Store.workflows`);
    return { store, ws: store.workflows, queue: await createQueue(store) };
  }

  describe("workflowInsert / workflowGet / workflowList", () => {
    it("keeps every version, answers the latest by default, and refuses a version twice", async () => {
      const { ws, queue } = await setup();
      const v1 = definition(queue);
      expect(await ws.workflowInsert({ def: v1, now: T0 })).toBe(true);
      expect(await ws.workflowInsert({ def: v1, now: T0 + 1 })).toBe(false);
      const v2 = { ...v1, version: 2, jobs: v1.jobs.slice(0, 1) };
      expect(await ws.workflowInsert({ def: v2, now: T0 + 2 })).toBe(true);
      expect((await ws.workflowGet({ name: v1.name }))?.def).toEqual(v2);
      expect(await ws.workflowGet({ name: v1.name, version: 1 })).toEqual({ def: v1, createdAt: T0 });
      expect(await ws.workflowGet({ name: v1.name, version: 3 })).toBeUndefined();
      expect((await ws.workflowList()).find((w) => w.def.name === v1.name)?.def.version).toBe(2);
    });
  });

  describe("instanceInsert / instanceGet / instanceList", () => {
    it("inserts an instance with its first queue jobs once, keeping each job's workflow context", async () => {
      const { store, ws, queue } = await setup();
      const { instance, job } = await started(store, ws, queue);
      expect(await ws.instanceGet({ id: instance.id })).toEqual(instance);
      expect(job.workflow).toBe(context(instance.id));
      expect(await ws.instanceInsert({ instance, jobs: [], now: T0 })).toBe(false);
    });

    it("lists newest first, by workflow and state, from a cursor", async () => {
      const { ws, queue } = await setup();
      const def = definition(queue);
      const made: WorkflowInstance[] = [];
      for (let i = 0; i < 4; i++) {
        const t = startInstance(
          def,
          { id: `l${process.pid}_${++counter}`, now: T0 + i, keepOpen: false, external: [] },
          () => "",
        );
        await ws.instanceInsert({ instance: t.instance, jobs: [], now: T0 + i });
        made.push(t.instance);
      }
      const page = await ws.instanceList({ workflow: def.name, limit: 2 });
      expect(page.map((i) => i.id)).toEqual([made[3]!.id, made[2]!.id]);
      const rest = await ws.instanceList({
        workflow: def.name,
        limit: 10,
        after: { createdAt: page[1]!.createdAt, id: page[1]!.id },
      });
      expect(rest.map((i) => i.id)).toEqual([made[1]!.id, made[0]!.id]);
      expect(await ws.instanceList({ workflow: def.name, state: "succeeded", limit: 10 })).toEqual([]);
    });
  });

  describe("jobCompleteMany / jobFailMany on a workflow job", () => {
    it("change nothing and answer 'workflow' with its context; a stale claim is stale as ever", async () => {
      const { store, ws, queue } = await setup();
      const { job } = await started(store, ws, queue);
      const [done] = await store.jobCompleteMany({
        items: [{ id: job.id, claimToken: job.claimToken, customStatus: "" }],
        now: T0,
      });
      expect(done).toEqual({ outcome: "workflow", workflow: job.workflow });
      const [failed] = await store.jobFailMany({
        items: [{ id: job.id, claimToken: job.claimToken, customStatus: "", noRetry: true }],
        now: T0,
      });
      expect(failed).toEqual({ outcome: "workflow", workflow: job.workflow });
      expect((await get(store, job.id))?.state).toBe("running");
      const [stale] = await store.jobCompleteMany({
        items: [{ id: job.id, claimToken: "other", customStatus: "" }],
        now: T0,
      });
      expect(stale!.outcome).toBe("stale_claim");
    });
  });

  describe("a workflow job's run through the plain paths", () => {
    it("keeps its context through a claim bounded in bytes (the context is no body), hand-out, checkpoint with a new body, a retry and a second run", async () => {
      const { store, queue } = await setup();
      // Longer than the first KiB of a job that some stores read for a transition.
      const long = encodeJobContext({
        workflow: "w",
        version: 1,
        instanceId: "long",
        job: "a",
        run: 1,
        triggeredBy: [
          {
            input: "job:z",
            event: { id: "e", postedAt: 1, customStatus: "ü".repeat(600), result: new Uint8Array(900).fill(7) },
          },
        ],
      });
      const [id, plain] = await insert(store, queue, [
        { workflow: long, body: new Uint8Array(10) },
        { body: new Uint8Array(10) },
      ]);
      const epoch = await lease(store, queue);
      const claimed = await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, maxBytes: 25, now: T0 });
      expect(claimed.map((j) => [j.id, j.workflow])).toEqual([
        [id, long],
        [plain, undefined],
      ]);
      await store.jobStartMany({
        queue,
        partition: 0,
        epoch,
        plans: [{ id: id!, claimToken: "t1", claimExpiresAt: T0 + 1000, retryDelayMs: 100 }],
        now: T0,
      });
      await store.jobCheckpointMany({
        items: [
          {
            id: id!,
            claimToken: "t1",
            claimExpiresAt: T0 + 2000,
            newBody: Uint8Array.of(9, 9),
            moveToPending: false,
            runAfter: 0,
            attemptsAllowed: 0,
            customStatus: "half",
          },
        ],
        now: T0,
      });
      const [failed] = await store.jobFailMany({
        items: [{ id: id!, claimToken: "t1", customStatus: "", noRetry: false, retryDelayMs: 0 }],
        now: T0,
      });
      expect(failed).toEqual({ outcome: "workflow", workflow: long });
      const { expired } = await store.jobClaimExpire({ now: T0 + 2000, limit: 100 });
      expect(expired.find((j) => j.id === id)).toMatchObject({ state: "pending", workflow: long });
      // Back to pending after the planned retry delay (100 ms), as any job.
      const [again] = await handOut(store, queue, { now: T0 + 2100, limit: 1 });
      expect(again).toMatchObject({ id, attempt: 2, customStatus: expect.stringContaining("half"), workflow: long });
      expect(Array.from(again!.body)).toEqual([9, 9]);
      const [done] = await store.jobCompleteMany({
        items: [{ id: id!, claimToken: again!.claimToken, customStatus: "" }],
        now: T0 + 2100,
      });
      expect(done).toEqual({ outcome: "workflow", workflow: long });
      expect((await store.jobGetMany({ ids: [id!], bodies: false }))[0]).toMatchObject({ bodySize: 2, workflow: long });
    });

    it("in an ACK batch with plain jobs of the same claim: the plain ones are acknowledged, the workflow one answered", async () => {
      const { store, queue } = await setup();
      const ids = await insert(store, queue, [{}, { workflow: context("mixed") }, {}]);
      const epoch = await lease(store, queue);
      const claimed = await store.jobClaimMany({ queue, partition: 0, epoch, limit: 10, now: T0 });
      // One claim token for the batch, as the broker gives a hand-out batch.
      const plans = claimed.map((j) => ({
        id: j.id,
        claimToken: "shared",
        claimExpiresAt: T0 + 1000,
        retryDelayMs: 0,
      }));
      await store.jobStartMany({ queue, partition: 0, epoch, plans, now: T0 });
      const results = await store.jobCompleteMany({
        items: ids.map((id) => ({ id, claimToken: "shared", customStatus: "" })),
        now: T0,
      });
      expect(results).toEqual([
        { outcome: "acknowledged" },
        { outcome: "workflow", workflow: context("mixed") },
        { outcome: "acknowledged" },
      ]);
      expect((await store.jobGetMany({ ids })).map((j) => j?.state)).toEqual(["succeeded", "running", "succeeded"]);
    });
  });

  describe("instanceApply", () => {
    it("applies the ACK, the instance, new jobs and cancels in one step", async () => {
      const { store, ws, queue } = await setup();
      const { instance, job } = await started(store, ws, queue);
      const [pending, other] = await insert(store, queue, [{}, {}]);
      const follow = newJob(queue, { workflow: context(instance.id, "b") });
      const res = await ws.instanceApply({
        id: instance.id,
        rev: instance.rev,
        instance: next(instance),
        jobs: [follow],
        cancel: [pending!, job.id],
        ack: { kind: "complete", id: job.id, claimToken: job.claimToken, customStatus: "done" },
        now: T0 + 5,
      });
      expect(res).toEqual({ applied: true, ack: { outcome: "acknowledged" } });
      expect(await get(store, job.id)).toMatchObject({ state: "succeeded", customStatus: "done" }); // ended: not cancelled
      expect(await get(store, pending!)).toBeUndefined();
      expect((await get(store, other!))?.state).toBe("pending");
      expect(await get(store, follow.id)).toMatchObject({ state: "pending", workflow: follow.workflow });
      expect((await ws.instanceGet({ id: instance.id }))?.rev).toBe(instance.rev + 1);
    });

    it("writes nothing over another revision, or with a stale claim", async () => {
      const { store, ws, queue } = await setup();
      const { instance, job } = await started(store, ws, queue);
      const follow = newJob(queue);
      const ack = { kind: "complete" as const, id: job.id, claimToken: job.claimToken, customStatus: "" };
      const conflict = await ws.instanceApply({
        id: instance.id,
        rev: instance.rev + 7,
        instance: next(instance),
        jobs: [follow],
        cancel: [],
        ack,
        now: T0,
      });
      expect(conflict).toEqual({ applied: false });
      const stale = await ws.instanceApply({
        id: instance.id,
        rev: instance.rev,
        instance: next(instance),
        jobs: [follow],
        cancel: [],
        ack: { ...ack, claimToken: "old" },
        now: T0,
      });
      expect(stale).toEqual({ applied: false, ack: { outcome: "stale_claim" } });
      expect(await get(store, follow.id)).toBeUndefined();
      expect((await get(store, job.id))?.state).toBe("running");
      expect((await ws.instanceGet({ id: instance.id }))?.rev).toBe(instance.rev);
    });

    it("applies a failure ACK as the job's transition decides (a retry while attempts remain)", async () => {
      const { store, ws, queue } = await setup();
      const { instance, job } = await started(store, ws, queue);
      const res = await ws.instanceApply({
        id: instance.id,
        rev: instance.rev,
        instance: next(instance),
        jobs: [],
        cancel: [],
        ack: {
          kind: "fail",
          id: job.id,
          claimToken: job.claimToken,
          customStatus: "oops",
          retryDelayMs: 500,
          noRetry: false,
        },
        now: T0,
      });
      expect(res).toEqual({ applied: true, ack: { outcome: "acknowledged", pendingAt: T0 + 500 } });
      expect(await get(store, job.id)).toMatchObject({ state: "pending", runAfter: T0 + 500 });
    });

    it("applies an ACK alone when its instance is gone (rev 0, no instance)", async () => {
      const { store, ws, queue } = await setup();
      const [id] = await insert(store, queue, [{ workflow: context("gone") }]);
      const [job] = await handOut(store, queue);
      expect(job!.id).toBe(id);
      const res = await ws.instanceApply({
        id: "gone",
        rev: 0,
        jobs: [],
        cancel: [],
        ack: { kind: "complete", id: id!, claimToken: job!.claimToken, customStatus: "" },
        now: T0,
      });
      expect(res).toEqual({ applied: true, ack: { outcome: "acknowledged" } });
      expect((await get(store, id!))?.state).toBe("succeeded");
    });
  });

  describe("instanceDeleteEnded", () => {
    it("deletes ended instances whose end is before the bound, never running ones", async () => {
      const { ws, queue } = await setup();
      const def = definition(queue);
      const ended = {
        ...startInstance(def, { id: `e${process.pid}_${++counter}`, now: T0, keepOpen: false, external: [] }, () => "")
          .instance,
      };
      ended.state = "succeeded";
      ended.endedAt = T0 + 10;
      const running = startInstance(
        def,
        { id: `r${process.pid}_${++counter}`, now: T0, keepOpen: false, external: [] },
        () => "",
      ).instance;
      await ws.instanceInsert({ instance: ended, jobs: [], now: T0 });
      await ws.instanceInsert({ instance: running, jobs: [], now: T0 });
      expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 10, limit: 100 })).toBe(0);
      expect(await ws.instanceDeleteEnded({ endedBefore: T0 + 11, limit: 100 })).toBeGreaterThanOrEqual(1);
      expect(await ws.instanceGet({ id: ended.id })).toBeUndefined();
      expect(await ws.instanceGet({ id: running.id })).toBeDefined();
    });

    it("goes by an ended instance's latest end: written again with a later one, it stays until then", async () => {
      const { ws, queue } = await setup();
      const def = definition(queue);
      const first = {
        ...startInstance(def, { id: `x${process.pid}_${++counter}`, now: T0, keepOpen: false, external: [] }, () => "")
          .instance,
        state: "succeeded" as const,
        endedAt: T0 + 10,
      };
      await ws.instanceInsert({ instance: first, jobs: [], now: T0 });
      const later = { ...first, rev: first.rev + 1, endedAt: T0 + 50 };
      const step = { id: first.id, rev: first.rev, instance: later, jobs: [], cancel: [], now: T0 + 50 };
      expect(await ws.instanceApply(step)).toEqual({ applied: true });
      await ws.instanceDeleteEnded({ endedBefore: T0 + 20, limit: 100 });
      expect(await ws.instanceGet({ id: first.id })).toEqual(later);
      await ws.instanceDeleteEnded({ endedBefore: T0 + 51, limit: 100 });
      expect(await ws.instanceGet({ id: first.id })).toBeUndefined();
    });

    it("deletes the oldest end first under a limit, whatever the order the instances were written in", async () => {
      const { ws, queue } = await setup();
      const def = definition(queue);
      // Ends long before any other case's, so a store shared with them has no other candidate.
      const endedAt = (at: number) => ({
        ...startInstance(def, { id: `o${process.pid}_${++counter}`, now: T0, keepOpen: false, external: [] }, () => "")
          .instance,
        state: "succeeded" as const,
        endedAt: at,
      });
      const newer = endedAt(2_000);
      const older = endedAt(1_000);
      for (const instance of [newer, older]) await ws.instanceInsert({ instance, jobs: [], now: T0 });
      expect(await ws.instanceDeleteEnded({ endedBefore: 3_000, limit: 1 })).toBe(1);
      expect(await ws.instanceGet({ id: older.id })).toBeUndefined();
      expect(await ws.instanceGet({ id: newer.id })).toBeDefined();
      expect(await ws.instanceDeleteEnded({ endedBefore: 3_000, limit: 1 })).toBe(1);
      expect(await ws.instanceGet({ id: newer.id })).toBeUndefined();
    });
  });
}
