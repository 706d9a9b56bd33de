/**
 * Workflows through the public API (docs/workflows.md), on any store that keeps them: a
 * worker takes each run as an ordinary job of its queue, with its workflow context; its
 * ACK (with a result) posts the events that make the downstream jobs run. Each store's
 * entry test (workflows*.test.ts) runs these cases with describeWorkflowService.
 */
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { ErrorInfoSchema, ErrorReason } from "@runlater/sdk/gen/errors_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { type DequeuedJob, Outcome, WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import {
  FailurePolicy,
  InstanceJobState,
  InstanceState,
  RunOutcome,
  WorkflowService,
} from "@runlater/sdk/gen/workflow_service_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../src/server.js";
import type { Store } from "../../src/store/store.js";

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const bytes = (s: string) => new TextEncoder().encode(s);
const source = (job: string) => ({ source: { case: "job" as const, value: job } });

/** The WorkflowService cases on a server over `openStore`'s store (the server closes it when it stops). */
export function describeWorkflowService(name: string, openStore: () => Promise<Store>): void {
  describe(`WorkflowService on the ${name} store`, () => {
    let server: RunningServer;
    let wf: ReturnType<typeof createClient<typeof WorkflowService>>;
    let worker: ReturnType<typeof createClient<typeof WorkerService>>;
    let queues: ReturnType<typeof createClient<typeof QueueService>>;

    beforeAll(async () => {
      server = await startServer({ store: await openStore(), port: 0 });
      const transport = createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" });
      wf = createClient(WorkflowService, transport);
      worker = createClient(WorkerService, transport);
      queues = createClient(QueueService, transport);
      for (const name of ["extract", "transform", "load"]) await queues.createQueue({ name });
    });
    afterAll(() => server.stop());

    /** Takes one job of `queue` (waiting for it: a store's broker may take a moment to claim it) and acks it with a result (or fails it for good). */
    async function work(queue: string, result: string, fail = false): Promise<DequeuedJob> {
      const { jobs } = await worker.dequeue({ queue, limit: 1, wait: { seconds: BigInt(10) } });
      const [job] = jobs;
      if (!job) throw new Error(`no job on ${queue}`);
      const { results } = await worker.ack(
        fail
          ? { queue, failed: [{ jobId: job.jobId, claimToken: job.claimToken, customStatus: "boom", noRetry: true }] }
          : {
              queue,
              succeeded: [
                { jobId: job.jobId, claimToken: job.claimToken, customStatus: `${queue} done`, result: bytes(result) },
              ],
            },
      );
      expect(results[0]!.outcome).toBe(Outcome.ACKNOWLEDGED);
      return job;
    }

    it("runs a diamond: fan-out, fan-in, each run carrying its upstream outputs", async () => {
      const applied = await wf.applyWorkflow({
        workflow: {
          name: "etl",
          jobs: [
            { name: "extract", queue: "extract", body: bytes("e") },
            { name: "left", queue: "transform", inputs: [source("extract")] },
            { name: "right", queue: "transform", inputs: [source("extract")] },
            { name: "load", queue: "load", inputs: [source("left"), source("right")] },
          ],
        },
      });
      expect(applied.workflow?.version).toBe(1);
      expect(applied.created).toBe(true);
      expect((await wf.applyWorkflow({ workflow: applied.workflow })).created).toBe(false); // same definition: same version

      const { instance } = await wf.startInstance({ workflow: "etl" });
      const id = instance!.instanceId;
      expect(instance!.jobs.find((j) => j.name === "extract")!.state).toBe(InstanceJobState.RUNNABLE);

      const extract = await work("extract", "rows=3");
      expect(extract.workflow).toMatchObject({ workflow: "etl", instanceId: id, job: "extract", run: 1 });
      expect(text(extract.body)).toBe("e");

      const left = await work("transform", "L");
      const right = await work("transform", "R");
      expect([left.workflow!.job, right.workflow!.job].sort()).toEqual(["left", "right"]);
      expect(text(left.workflow!.triggeredBy[0]!.result)).toBe("rows=3");
      expect(left.workflow!.triggeredBy[0]).toMatchObject({
        input: "job:extract",
        fromJob: "extract",
        fromRun: 1,
        customStatus: "extract done",
      });

      const mid = await wf.getInstance({ instanceId: id });
      expect(mid.instance!.jobs.find((j) => j.name === "load")!.state).toBe(InstanceJobState.RUNNABLE);
      const load = await work("load", "ok");
      expect(load.workflow!.triggeredBy.map((e) => text(e.result)).sort()).toEqual(["L", "R"]);

      const end = await wf.getInstance({ instanceId: id });
      expect(end.instance!.state).toBe(InstanceState.SUCCEEDED);
      const loadJob = end.instance!.jobs.find((j) => j.name === "load")!;
      expect(loadJob.runs[0]).toMatchObject({ run: 1, outcome: RunOutcome.SUCCEEDED, customStatus: "load done" });
      expect(text(loadJob.runs[0]!.result)).toBe("ok");
    });

    it("aborts on a job that fails for good, and a stale ACK of a run posts nothing", async () => {
      await wf.applyWorkflow({
        workflow: {
          name: "fragile",
          jobs: [
            { name: "a", queue: "extract" },
            { name: "b", queue: "transform", inputs: [source("a")], onFailure: FailurePolicy.ABORT },
            { name: "c", queue: "load", inputs: [source("b")] },
          ],
        },
      });
      const { instance } = await wf.startInstance({ workflow: "fragile" });
      const a = await work("extract", "x");
      // A second ACK of the same claim is stale now: nothing happens twice.
      const again = await worker.ack({ queue: "extract", succeeded: [{ jobId: a.jobId, claimToken: a.claimToken }] });
      expect(again.results[0]!.outcome).toBe(Outcome.STALE_CLAIM);
      await work("transform", "", true);
      const end = await wf.getInstance({ instanceId: instance!.instanceId });
      expect(end.instance!.state).toBe(InstanceState.ABORTED);
      expect((await worker.dequeue({ queue: "load", limit: 5 })).jobs).toEqual([]);
    });

    it("waits on an external input, answers with clear errors, and lists instances newest first", async () => {
      await wf.applyWorkflow({
        workflow: {
          name: "fed",
          jobs: [{ name: "take", queue: "load", inputs: [{ source: { case: "external", value: "files" } }] }],
        },
      });
      const { instance } = await wf.startInstance({ workflow: "fed", keepOpen: true });
      const id = instance!.instanceId;
      expect((await worker.dequeue({ queue: "load", limit: 1 })).jobs).toEqual([]);
      await wf.postEvent({ instanceId: id, event: { input: "files", customStatus: "f1", result: bytes("a.csv") } });
      const take = await work("load", "");
      expect(text(take.workflow!.triggeredBy[0]!.result)).toBe("a.csv");
      expect((await wf.closeInstance({ instanceId: id })).instance!.state).toBe(InstanceState.SUCCEEDED);

      const refused = async (call: Promise<unknown>) => {
        const err = ConnectError.from(
          await call.then(
            () => new Error("accepted"),
            (e: unknown) => e,
          ),
        );
        return { code: err.code, reason: err.findDetails(ErrorInfoSchema)[0]?.reason, message: err.rawMessage };
      };
      expect(await refused(wf.postEvent({ instanceId: id, event: { input: "nope" } }))).toMatchObject({
        code: Code.FailedPrecondition,
        reason: ErrorReason.WORKFLOW_RULE,
      });
      expect(await refused(wf.startInstance({ workflow: "nope" }))).toMatchObject({
        code: Code.NotFound,
        reason: ErrorReason.WORKFLOW_NOT_FOUND,
        message: expect.stringMatching(/workflow "nope" does not exist/),
      });
      const list = await wf.listInstances({ limit: 2 });
      expect(list.instances.length).toBe(2);
      expect(list.nextPageToken).not.toBe("");
      const next = await wf.listInstances({ limit: 2, pageToken: list.nextPageToken });
      expect(next.instances[0]!.instanceId).not.toBe(list.instances[0]!.instanceId);
    });
  });
}
