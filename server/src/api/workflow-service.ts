/** runlater.v1.WorkflowService: parse, call the engine's workflows, map (docs/workflows.md). */
import type { ConnectRouter } from "@connectrpc/connect";
import { WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import { limits } from "../domain/limits.js";
import type { WorkflowInstance } from "../domain/workflow-transitions.js";
import type { Engine } from "../engine/engine.js";
import { instanceStateFromProto, instanceToProto, workflowFromProto, workflowToProto } from "../wire/workflow.js";

const EMPTY = new Uint8Array();

export function registerWorkflowService(router: ConnectRouter, engine: Engine): ConnectRouter {
  const workflows = engine.workflows;

  /** The instance with its jobs; a queued job is RUNNING when a worker holds its queue job. */
  async function full(instance: WorkflowInstance) {
    const current = Object.values(instance.jobs)
      .filter((job) => job.state === "queued")
      .map((job) => job.runs[job.runs.length - 1]?.queueJobId)
      .filter((id): id is string => id !== undefined);
    const jobs = current.length > 0 ? await engine.getJobs(current, false) : [];
    const running = new Set(jobs.filter((j) => j?.state === "running").map((j) => j!.id));
    return instanceToProto(instance, { withJobs: true, running });
  }

  return router.service(WorkflowService, {
    async applyWorkflow(req) {
      const { stored, created } = await workflows.apply(workflowFromProto(req.workflow));
      return { workflow: workflowToProto(stored.def, stored.createdAt), created };
    },
    async getWorkflow(req) {
      const stored = await workflows.get(req.name, req.version);
      return { workflow: workflowToProto(stored.def, stored.createdAt) };
    },
    async listWorkflows() {
      return { workflows: (await workflows.list()).map((w) => workflowToProto(w.def, w.createdAt)) };
    },
    async startInstance(req) {
      const instance = await workflows.start({
        workflow: req.workflow,
        events: req.events.map((e) => ({ input: e.input, output: { customStatus: e.customStatus, result: e.result } })),
        keepOpen: req.keepOpen,
      });
      // As started: its first runs' queue jobs were inserted a moment ago, so they show as
      // RUNNABLE without reading them back (a worker may have taken one since; GetInstance says).
      return { instance: instanceToProto(instance, { withJobs: true, running: new Set() }) };
    },
    async getInstance(req) {
      return { instance: await full(await workflows.instance(req.instanceId)) };
    },
    async listInstances(req) {
      if (req.limit > limits.scanLimitMax) throw invalidArgument("limit", `limit is at most ${limits.scanLimitMax}`);
      const limit = req.limit || limits.scanLimitDefault;
      const page = await workflows.listInstances({
        workflow: req.workflow || undefined,
        state: instanceStateFromProto(req.state),
        limit: limit + 1,
        after: req.pageToken === "" ? undefined : decodeToken(req.pageToken),
      });
      const shown = page.slice(0, limit);
      const last = shown[shown.length - 1];
      return {
        instances: shown.map((i) => instanceToProto(i, { withJobs: false })),
        nextPageToken: page.length > limit && last ? encodeToken(last) : "",
      };
    },
    async cancelInstance(req) {
      return { instance: await full(await workflows.cancel(req.instanceId)) };
    },
    async closeInstance(req) {
      return { instance: await full(await workflows.close(req.instanceId)) };
    },
    async postEvent(req) {
      if (!req.event || req.event.input === "")
        throw invalidArgument("event.input", "name the external input to post to");
      const output = { customStatus: req.event.customStatus, result: req.event.result ?? EMPTY };
      return { instance: await full(await workflows.postEvent(req.instanceId, req.event.input, output)) };
    },
    async rerunJob(req) {
      return { instance: await full(await workflows.rerun(req.instanceId, req.job, req.run)) };
    },
    async disableJob(req) {
      return { instance: await full(await workflows.disable(req.instanceId, req.job)) };
    },
    async enableJob(req) {
      return { instance: await full(await workflows.enable(req.instanceId, req.job)) };
    },
  });
}

function encodeToken(i: WorkflowInstance): string {
  return Buffer.from(JSON.stringify([i.createdAt, i.id])).toString("base64url");
}

function decodeToken(token: string): { createdAt: number; id: string } {
  try {
    const [createdAt, id] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof createdAt === "number" && typeof id === "string") return { createdAt, id };
  } catch {
    // fall through
  }
  throw invalidArgument("page_token", "page_token is not one this server issued: pass next_page_token unchanged");
}
