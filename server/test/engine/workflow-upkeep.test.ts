/**
 * The reconciler and the retention of ended instances (docs/workflows.md#the-reconciler),
 * on the memory store under a manual clock: a run whose queue job failed by claim expiry,
 * or whose queue job is gone, ends failed in its instance, once.
 */
import { describe, expect, it } from "vitest";
import { ManualClock } from "../../src/domain/clock.js";
import type { FailurePolicy } from "../../src/domain/workflow-definition.js";
import { silentLogger } from "../../src/log.js";
import { Maintenance } from "../../src/maintenance/maintenance.js";
import { setup } from "./harness.js";

const DAY = 86_400_000;

async function started(onFailure: FailurePolicy, o: { attempts?: number } = {}) {
  const h = await setup({ queue: { claimTimeoutMs: 1000, defaultAttemptsAllowed: o.attempts ?? 1 } });
  await h.engine.workflows.apply({
    name: `wf_${onFailure}`,
    jobs: [
      { name: "a", queue: h.queue, inputs: [], onFailure, body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
      { name: "b", queue: h.queue, inputs: [], onFailure, body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
    ],
  });
  const instance = await h.engine.workflows.start({ workflow: `wf_${onFailure}`, events: [], keepOpen: false });
  const runJob = (job: string) => instance.jobs[job]!.runs[0]!.queueJobId;
  const run = async (job: string) => (await h.engine.workflows.instance(instance.id)).jobs[job]!.runs[0]!;
  const state = async () => (await h.engine.workflows.instance(instance.id)).state;
  return { ...h, instance, runJob, run, state };
}

type Harness = Awaited<ReturnType<typeof started>>;

/** Deletes the queue's pending jobs, as a user would (DeleteJobs). */
const deletePending = (h: Harness) =>
  h.engine.deleteJobs({ queue: h.queue, filter: { state: "pending", priority: 0, bodyRegex: "" }, limit: 100 });

/** Another maintenance on the same store, with its own chunk and retention (its timers not started). */
const upkeep = (h: Harness, o: { chunk?: number; instanceRetentionMs?: number }) =>
  new Maintenance({
    store: h.store,
    engine: h.engine,
    clock: h.clock,
    log: silentLogger,
    sweepIntervalMs: 1000,
    gcIntervalMs: 60_000,
    chunk: o.chunk ?? 100,
    instanceRetentionMs: o.instanceRetentionMs,
  });

describe("the reconciler", () => {
  it("ends a run whose last attempt's claim expired, right after the sweep (abort ends the instance)", async () => {
    const h = await started("abort");
    const taken = await h.dequeue(1);
    const job = taken[0]!;
    const name = job.id === h.runJob("a") ? "a" : "b";
    await h.clock.advance(1000); // the claim expires; the sweep fails the job for good
    expect((await h.job(job.id))!.state).toBe("failed");
    expect(await h.run(name)).toMatchObject({ outcome: "failed" });
    expect(await h.state()).toBe("aborted");
    // The other run was abandoned and its queue job cancelled.
    const other = name === "a" ? "b" : "a";
    expect((await h.run(other)).outcome).toBe("abandoned");
    expect(await h.job(h.runJob(other))).toBeUndefined();
  });

  it("after a crash between the sweep and the step, the periodic pass ends the run, once", async () => {
    const h = await started("continue");
    await h.maintenance.stop();
    const [job] = await h.dequeue(1);
    await h.clock.advance(1000);
    // The sweep as a crashed node ran it: the job is FAILED, the instance never heard.
    const { expired } = await h.store.jobClaimExpire({ now: h.clock.now(), limit: 100 });
    expect(expired.map((j) => [j.id, j.state])).toEqual([[job!.id, "failed"]]);
    const name = job!.id === h.runJob("a") ? "a" : "b";
    expect((await h.run(name)).outcome).toBe("queued");
    expect(await h.maintenance.maintainWorkflows()).toEqual({ reconciled: 1, deleted: 0 });
    expect(await h.run(name)).toMatchObject({ outcome: "failed" });
    const rev = (await h.engine.workflows.instance(h.instance.id)).rev;
    expect(await h.maintenance.maintainWorkflows()).toEqual({ reconciled: 0, deleted: 0 });
    expect((await h.engine.workflows.instance(h.instance.id)).rev).toBe(rev);
    expect(await h.state()).toBe("running"); // continue: the other run goes on
  });

  it("ends a run whose queue job was deleted by a user", async () => {
    const h = await started("continue");
    await h.maintenance.stop();
    expect(await deletePending(h)).toBe(2);
    await h.maintenance.maintainWorkflows();
    expect((await h.run("a")).customStatus).toMatch(/is gone/);
    expect(await h.state()).toBe("failed");
  });
});

describe("the periodic pass", () => {
  it("looks at most `chunk` running instances per pass, then the next page, then from the newest again", async () => {
    const h = await started("continue");
    await h.maintenance.stop();
    for (let i = 0; i < 2; i++)
      await h.engine.workflows.start({ workflow: "wf_continue", events: [], keepOpen: false });
    expect(await deletePending(h)).toBe(6);
    const pass = upkeep(h, { chunk: 2 });
    expect((await pass.maintainWorkflows()).reconciled).toBe(2);
    expect((await pass.maintainWorkflows()).reconciled).toBe(1);
    expect((await pass.maintainWorkflows()).reconciled).toBe(0);
    const running = await h.engine.workflows.listInstances({ state: "running", limit: 10 });
    expect(running).toEqual([]);
  });
});

describe("retention of ended instances", () => {
  it("deletes an instance once its retention has passed since it ended, never a running one", async () => {
    const h = await started("continue");
    await h.maintenance.stop();
    const running = await h.engine.workflows.start({ workflow: "wf_continue", events: [], keepOpen: true });
    await h.engine.workflows.cancel(h.instance.id);
    const endedAt = h.clock.now();
    const twoDays = upkeep(h, { instanceRetentionMs: 2 * DAY });
    await h.clock.advance(2 * DAY - 1);
    expect((await twoDays.maintainWorkflows()).deleted).toBe(0);
    await h.clock.advance(1);
    expect((await twoDays.maintainWorkflows()).deleted).toBe(1);
    expect(h.clock.now() - endedAt).toBe(2 * DAY);
    await expect(h.engine.workflows.instance(h.instance.id)).rejects.toThrow(/does not exist/);
    expect((await h.engine.workflows.instance(running.id)).state).toBe("running");
  });

  it("defaults to 7 days", async () => {
    const h = await started("continue");
    await h.engine.workflows.cancel(h.instance.id);
    await h.maintenance.stop();
    expect(h.clock).toBeInstanceOf(ManualClock);
    await h.clock.advance(7 * DAY - 1);
    expect((await h.maintenance.maintainWorkflows()).deleted).toBe(0);
    await h.clock.advance(1);
    expect((await h.maintenance.maintainWorkflows()).deleted).toBe(1);
  });
});

describe("an instance whose queue was deleted", () => {
  it("can still be cancelled: a cancel starts no run, so it needs none of the workflow's queues", async () => {
    const h = await started("continue");
    await h.engine.deleteQueue(h.queue);
    const cancelled = await h.engine.workflows.cancel(h.instance.id);
    expect(cancelled.state).toBe("cancelled");
    expect(await h.engine.workflows.listInstances({ state: "running", limit: 10 })).toEqual([]);
  });
});
