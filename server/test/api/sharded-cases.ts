/**
 * Workflows and schedules through the public API on a store of 3 shards
 * (docs/workflows.md#stores-of-several-shards): an instance that lives on a shard other
 * than 0 is read, fed, re-run and cancelled like any; a schedule's update whose target
 * cannot live on its shard is refused, naming the queue and the fix; creates of one name
 * racing onto two shards make one schedule. Each store's entry test
 * (sharded.<store>.test.ts) runs these with describeShardedService.
 */
import { Code, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { OverlapPolicy, ScheduleService } from "@runlater/sdk/gen/schedule_service_pb.js";
import { Outcome, WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { InstanceState, RunOutcome, WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseJobId } from "../../src/domain/job-id.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { formulaShard } from "../../src/store/placement.js";
import type { Store } from "../../src/store/store.js";
import { refusal } from "./refusal.js";

const SHARDS = 3;

/** The shard a queue job lives on (queues here have one partition, placed by the formula). */
function shardOfJob(jobId: string): number {
  const where = parseJobId(jobId)!;
  return formulaShard(where.queue, where.partition, SHARDS);
}

/** The first name `base_N` whose one partition the formula puts on shard `shard`. */
function nameOn(base: string, shard: number): string {
  for (let i = 0; ; i++) if (formulaShard(`${base}_${i}`, 0, SHARDS) === shard) return `${base}_${i}`;
}

export function describeShardedService(name: string, openStore: () => Promise<Store>): void {
  describe(`workflows and schedules on the ${name} store of ${SHARDS} shards`, () => {
    let server: RunningServer;
    let c: ReturnType<typeof clients>;
    const [q1, q2] = [nameOn("sh_one", 1), nameOn("sh_two", 2)];

    function clients(url: string) {
      const transport = createConnectTransport({ baseUrl: url, httpVersion: "1.1" });
      return {
        workflows: createClient(WorkflowService, transport),
        schedules: createClient(ScheduleService, transport),
        queues: createClient(QueueService, transport),
        jobs: createClient(JobService, transport),
        worker: createClient(WorkerService, transport),
      };
    }

    beforeAll(async () => {
      server = await startServer({ store: await openStore(), port: 0 });
      c = clients(server.url);
      for (const queue of [q1, q2]) await c.queues.createQueue({ name: queue });
    });
    afterAll(() => server.stop());

    it("gets, feeds, re-runs and cancels an instance that lives on shard 1", async () => {
      await c.workflows.applyWorkflow({
        workflow: {
          name: "on_one",
          jobs: [
            { name: "a", queue: q1 },
            { name: "b", queue: q1, inputs: [{ source: { case: "external", value: "go" } }] },
          ],
        },
      });
      const id = (await c.workflows.startInstance({ workflow: "on_one", keepOpen: true })).instance!.instanceId;
      const run = async (job: string, n: number) =>
        (await c.workflows.getInstance({ instanceId: id })).instance!.jobs.find((j) => j.name === job)!.runs[n - 1]!;
      const first = await run("a", 1);
      expect(shardOfJob(first.jobId)).toBe(1);

      // a's run acknowledged: the step reaches the instance on shard 1.
      const { jobs } = await c.worker.dequeue({ queue: q1, limit: 1, wait: { seconds: BigInt(10) } });
      expect(jobs.map((j) => j.jobId)).toEqual([first.jobId]);
      const ack = await c.worker.ack({
        queue: q1,
        succeeded: [{ jobId: first.jobId, claimToken: jobs[0]!.claimToken }],
      });
      expect(ack.results[0]!.outcome).toBe(Outcome.ACKNOWLEDGED);
      expect((await run("a", 1)).outcome).toBe(RunOutcome.SUCCEEDED);

      // Re-run and post input: each new run's job beside the instance, on shard 1.
      await c.workflows.rerunJob({ instanceId: id, job: "a", run: 1 });
      await c.workflows.postEvent({ instanceId: id, event: { input: "go", customStatus: "now" } });
      const [rerun, fed] = [await run("a", 2), await run("b", 1)];
      expect([shardOfJob(rerun.jobId), shardOfJob(fed.jobId)]).toEqual([1, 1]);
      const queued = await c.jobs.getJobs({ jobIds: [rerun.jobId, fed.jobId] });
      expect(queued.jobs.map((j) => j.jobId).sort()).toEqual([rerun.jobId, fed.jobId].sort());

      // Cancel: the instance ends, and its queued jobs on shard 1 go with it.
      const cancelled = await c.workflows.cancelInstance({ instanceId: id });
      expect(cancelled.instance!.state).toBe(InstanceState.CANCELLED);
      expect((await c.jobs.getJobs({ jobIds: [rerun.jobId, fed.jobId] })).jobs).toEqual([]);
    });

    it("refuses an update whose target's queue has no partition on the schedule's shard, and keeps the schedule", async () => {
      const job = (queue: string) => ({ case: "job" as const, value: { queue, body: new Uint8Array([1]) } });
      const made = await c.schedules.createSchedule({
        schedule: { name: "moving", cron: "0 * * * *", target: job(q1), overlap: OverlapPolicy.ALLOW },
      });
      expect(made.created).toBe(true);
      const refused = await refusal(
        c.schedules.updateSchedule({
          schedule: { name: "moving", cron: "0 * * * *", target: job(q2), overlap: OverlapPolicy.ALLOW },
        }),
      );
      expect(refused.code).toBe(Code.FailedPrecondition);
      expect(refused.message).toMatch(
        new RegExp(`^schedule moving lives on shard 1, where queue "${q2}" has no partition`),
      );
      expect(refused.message).toContain(`give queue ${q2} a partition on every shard`);
      const kept = (await c.schedules.getSchedule({ name: "moving" })).schedule!;
      expect(kept.target.case === "job" && kept.target.value.queue).toBe(q1);
    });

    it("two creates of one name onto two shards at once: one is created, the other answers with that schedule", async () => {
      const create = (queue: string) =>
        c.schedules.createSchedule({
          schedule: {
            name: "raced",
            cron: "0 * * * *",
            target: { case: "job", value: { queue, body: new Uint8Array([1]) } },
            overlap: OverlapPolicy.ALLOW,
          },
        });
      const both = await Promise.all([create(q1), create(q2)]);
      expect(both.map((r) => r.created).sort()).toEqual([false, true]);
      const winner = both.find((r) => r.created)!.schedule!;
      expect(both.find((r) => !r.created)!.schedule!.target).toEqual(winner.target);
      const listed = (await c.schedules.listSchedules({ limit: 100 })).schedules.filter((s) => s.name === "raced");
      expect(listed).toHaveLength(1);
    });
  });
}
