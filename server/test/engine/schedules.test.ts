/**
 * Schedules on the engine and the maintenance leader, on the memory store under a manual
 * clock (docs/workflows.md#schedules): fires at their times, overlap policies, catch-up
 * after downtime, pause and resume, quotas, and one fire per time however many nodes try.
 */
import { describe, expect, it, vi } from "vitest";
import type { RunlaterError } from "../../src/domain/errors.js";
import { limits } from "../../src/domain/limits.js";
import { fireInstanceId, type ScheduleSpec } from "../../src/domain/schedule.js";
import { Engine } from "../../src/engine/engine.js";
import { setup } from "./harness.js";

const HOUR = 3_600_000;
const T0 = Date.UTC(2030, 0, 1); // the harness's ManualClock starts here

async function withWorkflow(o: Parameters<typeof setup>[0] = {}) {
  const h = await setup(o);
  await h.engine.workflows.apply({
    name: "nightly",
    jobs: [
      {
        name: "only",
        queue: h.queue,
        inputs: [{ external: "go" }],
        onFailure: "abort",
        body: new Uint8Array(),
        priority: 0,
        attemptsAllowed: 0,
      },
    ],
  });
  const spec = (over: Partial<ScheduleSpec> = {}): ScheduleSpec => ({
    name: "hourly",
    cron: "0 * * * *",
    timeZone: "",
    target: {
      kind: "workflow",
      workflow: "nightly",
      events: [{ input: "go", output: { customStatus: "tick", result: new Uint8Array() } }],
      keepOpen: false,
    },
    overlap: "allow",
    catchUp: "none",
    catchUpWindowMs: 0,
    ...over,
  });
  const instances = async () =>
    (await h.engine.workflows.listInstances({ workflow: "nightly", limit: 100 })).map((i) => i.id).sort();
  return { ...h, spec, instances };
}

async function refusal(p: Promise<unknown>): Promise<RunlaterError> {
  try {
    await p;
  } catch (err) {
    return err as RunlaterError;
  }
  throw new Error("not refused");
}

describe("schedules under the maintenance leader", () => {
  it("fire at their times, starting an instance whose id is derived from the time", async () => {
    const h = await withWorkflow();
    const { schedule, created } = await h.engine.schedules.create(h.spec(), false);
    expect(created).toBe(true);
    expect(schedule).toMatchObject({ timeZone: "UTC", nextFireAt: T0 + HOUR });
    await h.clock.advance(HOUR - 1);
    expect(await h.instances()).toEqual([]);
    await h.clock.advance(1);
    expect(await h.instances()).toEqual([fireInstanceId("hourly", T0 + HOUR)]);
    await h.clock.advance(HOUR);
    expect(await h.instances()).toEqual([fireInstanceId("hourly", T0 + HOUR), fireInstanceId("hourly", T0 + 2 * HOUR)]);
    const [job] = await h.dequeue();
    expect(job!.workflow).toBeDefined();
    const after = await h.engine.schedules.get("hourly");
    expect(after).toMatchObject({
      fires: 2,
      nextFireAt: T0 + 3 * HOUR,
      lastStarted: fireInstanceId("hourly", T0 + 2 * HOUR),
    });
    expect(after.history.map((r) => r.outcome)).toEqual(["started", "started"]);
  });

  it("creating an existing name changes nothing; a missing target or a bad field is refused by name", async () => {
    const h = await withWorkflow();
    await h.engine.schedules.create(h.spec(), false);
    const again = await h.engine.schedules.create(h.spec({ cron: "* * * * *" }), false);
    expect(again).toMatchObject({ created: false, schedule: { cron: "0 * * * *" } });
    const noWorkflow = await refusal(
      h.engine.schedules.create(
        h.spec({ name: "x", target: { kind: "workflow", workflow: "ghost", events: [], keepOpen: false } }),
        false,
      ),
    );
    expect(noWorkflow.reason).toBe("WORKFLOW_NOT_FOUND");
    const badInput = await refusal(
      h.engine.schedules.create(
        h.spec({
          name: "x",
          target: {
            kind: "workflow",
            workflow: "nightly",
            events: [{ input: "nope", output: { customStatus: "", result: new Uint8Array() } }],
            keepOpen: false,
          },
        }),
        false,
      ),
    );
    expect(badInput.field).toBe("schedule.workflow.events[0].input");
    const noQueue = await refusal(
      h.engine.schedules.create(
        h.spec({
          name: "x",
          target: { kind: "job", queue: "ghost", body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
        }),
        false,
      ),
    );
    expect(noQueue).toMatchObject({ reason: "QUEUE_NOT_FOUND", field: "schedule.job.queue" });
    expect((await refusal(h.engine.schedules.get("x"))).code).toBe("not_found");
  });

  it("keeps at most limits.schedulesMax schedules", async () => {
    const h = await setup();
    const job = (name: string): ScheduleSpec => ({
      name,
      cron: "0 0 * * *",
      timeZone: "UTC",
      target: { kind: "job", queue: h.queue, body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
      overlap: "allow",
      catchUp: "none",
      catchUpWindowMs: 0,
    });
    for (let i = 0; i < limits.schedulesMax; i++) await h.engine.schedules.create(job(`s${i}`), true);
    const over = await refusal(h.engine.schedules.create(job("one_more"), true));
    expect(over.code).toBe("resource_exhausted");
    expect(over.message).toMatch(/at most 1000 schedules/);
    await h.engine.schedules.delete("s0");
    expect((await h.engine.schedules.create(job("one_more"), true)).created).toBe(true);
  });

  it("a create told the name exists while nothing can be read (a sharded store's claim in flight) inserts again", async () => {
    const h = await withWorkflow();
    const ss = h.store.schedules!;
    // A store of several shards answers "exists" for a name another create has claimed and not
    // yet inserted (or crashed before inserting); the next insert takes such a claim over.
    const insert = vi.spyOn(ss, "scheduleInsert").mockResolvedValueOnce("exists");
    const { created, schedule } = await h.engine.schedules.create(h.spec(), false);
    expect(created).toBe(true);
    expect(insert).toHaveBeenCalledTimes(2);
    expect(await ss.scheduleGet({ name: schedule.name })).toEqual(schedule);
  });

  it("enqueue a plain job with a derived id; overlap skip waits while the previous job has not ended", async () => {
    const h = await setup();
    await h.engine.schedules.create(
      {
        name: "ping",
        cron: "*/10 * * * * *",
        timeZone: "UTC",
        target: {
          kind: "job",
          queue: h.queue,
          body: new TextEncoder().encode("ping"),
          priority: 2,
          attemptsAllowed: 1,
        },
        overlap: "skip",
        catchUp: "none",
        catchUpWindowMs: 0,
      },
      false,
    );
    await h.clock.advance(10_000);
    const first = await h.engine.schedules.get("ping");
    const [job] = await h.engine.getJobs([first.lastStarted]);
    expect(job).toMatchObject({ state: "pending", priority: 2, attemptsAllowed: 1, runAfter: T0 + 10_000 });
    await h.clock.advance(10_000); // the first job is still pending: skipped
    expect((await h.engine.schedules.get("ping")).history.at(-1)).toMatchObject({
      outcome: "skipped",
      previous: first.lastStarted,
    });
    const [running] = await h.dequeue();
    await h.ok(running!);
    await h.clock.advance(10_000);
    const third = await h.engine.schedules.get("ping");
    expect(third).toMatchObject({ fires: 2 });
    expect(third.lastStarted).not.toBe(first.lastStarted);
  });

  it("overlap cancel_previous cancels the running instance; allow lets both run", async () => {
    const h = await withWorkflow();
    await h.engine.schedules.create(h.spec({ overlap: "cancel_previous" }), false);
    await h.engine.schedules.create(h.spec({ name: "both", overlap: "allow" }), false);
    await h.clock.advance(2 * HOUR);
    const first = await h.engine.workflows.instance(fireInstanceId("hourly", T0 + HOUR));
    expect(first.state).toBe("cancelled");
    expect((await h.engine.workflows.instance(fireInstanceId("hourly", T0 + 2 * HOUR))).state).toBe("running");
    expect((await h.engine.schedules.get("hourly")).history.at(-1)).toMatchObject({
      outcome: "started",
      previous: fireInstanceId("hourly", T0 + HOUR),
    });
    for (const t of [T0 + HOUR, T0 + 2 * HOUR])
      expect((await h.engine.workflows.instance(fireInstanceId("both", t))).state).toBe("running");
  });

  it("after downtime, catch_up latest fires once for the latest time; none records the miss", async () => {
    const h = await withWorkflow();
    await h.engine.schedules.create(h.spec({ name: "latest", catchUp: "latest", catchUpWindowMs: 2 * HOUR }), false);
    await h.engine.schedules.create(h.spec({ name: "none" }), false);
    await h.maintenance.stop(); // no leader: the server is down
    await h.clock.advance(5 * HOUR + 30 * 60_000);
    expect(await h.instances()).toEqual([]);
    h.maintenance.start(); // back up: the leader fires what is due at once
    await h.clock.advance(0);
    expect(await h.instances()).toEqual([fireInstanceId("latest", T0 + 5 * HOUR)]);
    const none = await h.engine.schedules.get("none");
    expect(none.history).toEqual([
      { outcome: "missed", at: T0 + HOUR, through: T0 + 5 * HOUR, firedAt: T0 + 5 * HOUR + 30 * 60_000 },
    ]);
    expect(none.nextFireAt).toBe(T0 + 6 * HOUR);
  });

  it("a paused schedule does not fire; resumed, it fires from the next time after now", async () => {
    const h = await withWorkflow();
    await h.engine.schedules.create(h.spec(), true);
    expect((await h.engine.schedules.get("hourly")).nextFireAt).toBe(0);
    await h.clock.advance(3 * HOUR);
    expect(await h.instances()).toEqual([]);
    const resumed = await h.engine.schedules.resume("hourly");
    expect(resumed.nextFireAt).toBe(T0 + 4 * HOUR);
    await h.engine.schedules.pause("hourly");
    await h.clock.advance(HOUR);
    expect(await h.instances()).toEqual([]);
    await h.engine.schedules.resume("hourly");
    await h.clock.advance(HOUR);
    expect(await h.instances()).toEqual([fireInstanceId("hourly", T0 + 5 * HOUR)]);
  });

  it("a fire whose queue is gone is recorded as failed, and the schedule moves on", async () => {
    const h = await setup();
    await h.engine.schedules.create(
      {
        name: "orphan",
        cron: "0 * * * *",
        timeZone: "UTC",
        target: { kind: "job", queue: h.queue, body: new Uint8Array(), priority: 0, attemptsAllowed: 0 },
        overlap: "allow",
        catchUp: "none",
        catchUpWindowMs: 0,
      },
      false,
    );
    await h.engine.deleteQueue(h.queue);
    await h.clock.advance(HOUR);
    const s = await h.engine.schedules.get("orphan");
    expect(s).toMatchObject({ fires: 0, lastStarted: "", nextFireAt: T0 + 2 * HOUR });
    expect(s.history).toEqual([
      { outcome: "failed", at: T0 + HOUR, firedAt: T0 + HOUR, error: expect.stringMatching(/does not exist/) },
    ]);
  });
});

describe("one fire per time", () => {
  it("two nodes that both believe they lead fire a time once", async () => {
    const h = await withWorkflow();
    await h.maintenance.stop();
    await h.engine.schedules.create(h.spec(), false);
    const other = new Engine({ store: h.store, broker: h.broker, clock: h.clock });
    await h.clock.advance(HOUR);
    const results = await Promise.all([h.engine.schedules.fireDue(100), other.schedules.fireDue(100)]);
    expect(results.map((r) => r.started).sort()).toEqual([0, 1]);
    expect(await h.instances()).toEqual([fireInstanceId("hourly", T0 + HOUR)]);
    expect((await h.engine.schedules.get("hourly")).fires).toBe(1);
  });

  it("a crash before the fire's step leaves the time due: the next pass fires it, once", async () => {
    const h = await withWorkflow();
    await h.maintenance.stop();
    await h.engine.schedules.create(h.spec(), false);
    await h.clock.advance(HOUR);
    const ss = h.store.schedules;
    const real = ss.scheduleFire.bind(ss);
    ss.scheduleFire = async () => {
      throw new Error("store connection lost");
    };
    const crashed = await h.engine.schedules.fireDue(100);
    expect(crashed.errors).toHaveLength(1);
    expect(await h.instances()).toEqual([]);
    ss.scheduleFire = real;
    await h.clock.advance(30_000); // still on time
    expect((await h.engine.schedules.fireDue(100)).started).toBe(1);
    expect((await h.engine.schedules.fireDue(100)).started).toBe(0);
    expect(await h.instances()).toEqual([fireInstanceId("hourly", T0 + HOUR)]);
  });

  it("finds the instance an earlier try started (a store that inserts first): the schedule moves on, nothing doubles", async () => {
    const h = await withWorkflow();
    await h.maintenance.stop();
    await h.engine.schedules.create(h.spec(), false);
    await h.clock.advance(HOUR);
    // What a store that inserts first and then moves the schedule leaves after a crash in between.
    const begun = await h.engine.workflows.planStart({
      workflow: "nightly",
      events: [],
      keepOpen: false,
      id: fireInstanceId("hourly", T0 + HOUR),
      now: h.clock.now(),
    });
    await h.store.workflows.instanceInsert({ ...begun, now: h.clock.now() });
    expect((await h.engine.schedules.fireDue(100)).started).toBe(1);
    expect(await h.instances()).toEqual([fireInstanceId("hourly", T0 + HOUR)]);
    expect(await h.engine.countJobs({ queue: h.queue, filter: { priority: 0, bodyRegex: "" } })).toBe(0); // its first job waits for "go"
    expect((await h.engine.schedules.get("hourly")).nextFireAt).toBe(T0 + 2 * HOUR);
  });
});
