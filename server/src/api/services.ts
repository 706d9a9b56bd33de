/**
 * Connect handlers for JobService, WorkerService and QueueService: parse, call the
 * engine, map the result. No business logic here.
 */
import type { ConnectRouter, HandlerContext } from "@connectrpc/connect";
import { JobService } from "@runlater/sdk/gen/job_service_pb.js";
import { QueueService } from "@runlater/sdk/gen/queue_service_pb.js";
import { WorkerService } from "@runlater/sdk/gen/worker_service_pb.js";
import { invalidArgument } from "../domain/errors.js";
import type { Engine } from "../engine/engine.js";
import type { QueueView } from "../engine/inputs.js";
import type { QueueTotals } from "../engine/queue-totals.js";
import { dequeuedToProto } from "../wire/dequeued-job.js";
import { FORWARDED_CALL_HEADER, FORWARDED_HEADER } from "../wire/forwarding.js";
import { durationToMs, timestampToMs } from "../wire/time.js";
import {
  ackFromProto,
  jobToProto,
  outcomesToProto,
  queueConfigFromProto,
  queueToProto,
  stateFromProto,
} from "./convert.js";
import { dequeueStream, type OpenStreams } from "./dequeue-stream.js";
import { registerScheduleService } from "./schedule-service.js";
import { registerWorkflowService } from "./workflow-service.js";

/** Leave this much of the caller's deadline for the response to travel back. */
const DEADLINE_MARGIN_MS = 50;

/** Which public services a node serves: a broker (--role broker) serves WorkerService only. */
export interface ServedApis {
  frontend: boolean;
  /** Where DequeueStreams register until they have written everything (for shutdown). */
  streams: OpenStreams;
  /** What QueueStats.counters report: this node's totals since it started. */
  totals: QueueTotals;
}

/** Longest call id accepted (the router's are 12 characters); a longer one is ignored. */
const CALL_ID_MAX_LENGTH = 64;

export function registerServices(router: ConnectRouter, engine: Engine, served: ServedApis): ConnectRouter {
  if (served.frontend) {
    registerFrontend(router, engine, served.totals);
    registerWorkflowService(router, engine);
    registerScheduleService(router, engine);
  }
  return router.service(WorkerService, {
    async dequeue(req, ctx) {
      const result = await engine.dequeue({
        queue: req.queue,
        limit: req.limit,
        waitMs: Math.min(durationToMs(req.wait, "wait") ?? 0, deadlineLeft(ctx)),
        signal: ctx.signal,
        dryRun: req.dryRun,
        ack: req.ack ? ackFromProto(req.ack) : undefined,
        forwarded: ctx.requestHeader.get(FORWARDED_HEADER) === "1",
        forwardedCall: callId(ctx.requestHeader.get(FORWARDED_CALL_HEADER)),
      });
      return {
        jobs: result.jobs.map((j) => dequeuedToProto(j, req.dryRun)),
        ack: result.ack ? { results: outcomesToProto(result.ack) } : undefined,
      };
    },
    dequeueStream(requests, ctx) {
      // Binary protobuf (Connect's application/connect+proto, gRPC's application/grpc[+proto]) or JSON.
      const binary = !(ctx.requestHeader.get("content-type") ?? "").includes("json");
      return dequeueStream(engine, requests, ctx.signal, served.streams, binary);
    },
    async ack(req) {
      if (req.queue === "") throw invalidArgument("queue", "queue is empty: name the queue the jobs belong to");
      return { results: outcomesToProto(await engine.ack(ackFromProto(req))) };
    },
    async checkpoint(req) {
      const results = await engine.checkpoint({
        queue: req.queue,
        items: req.checkpoints.map((c, i) => ({
          jobId: c.jobId,
          claimToken: c.claimToken,
          extendClaimByMs: durationToMs(c.extendClaimBy, `checkpoints[${i}].extend_claim_by`),
          newBody: c.newBody,
          moveToPending: c.moveToPending,
          runAfter: timestampToMs(c.runAfter),
          attemptsAllowed: c.attemptsAllowed,
          customStatus: c.customStatus,
        })),
      });
      return { results: outcomesToProto(results) };
    },
  });
}

function registerFrontend(router: ConnectRouter, engine: Engine, totals: QueueTotals): void {
  const counted = (view: QueueView) => queueToProto(view, totals.of(view.queue.name), totals.since);
  router
    .service(JobService, {
      async enqueue(req) {
        const ids = await engine.enqueue(
          req.jobs.map((j) => ({
            queue: j.queue,
            body: j.body,
            priority: j.priority,
            runAfter: timestampToMs(j.runAfter),
            attemptsAllowed: j.attemptsAllowed,
            idempotencyKey: j.idempotencyKey,
            customStatus: j.customStatus,
            orderingKey: j.orderingKey,
            traceparent: j.traceparent,
          })),
        );
        return { jobIds: ids };
      },
      async getJobs(req) {
        const found = await engine.getJobs(req.jobIds, req.includeBody);
        return {
          jobs: found.flatMap((job) => (job ? [jobToProto(job, req.includeBody)] : [])),
          notFoundJobIds: req.jobIds.filter((_, i) => !found[i]),
        };
      },
      async scanJobs(req) {
        const page = await engine.scanJobs({
          queue: req.queue,
          filter: {
            state: stateFromProto(req.state),
            priority: req.priority,
            future: req.future,
            bodyRegex: req.bodyRegex,
          },
          limit: req.limit,
          pageToken: req.pageToken,
          includeBody: req.includeBody,
        });
        return { jobs: page.jobs.map((j) => jobToProto(j, req.includeBody)), nextPageToken: page.nextPageToken };
      },
      async countJobs(req) {
        const count = await engine.countJobs({
          queue: req.queue,
          filter: {
            state: stateFromProto(req.state),
            priority: req.priority,
            future: req.future,
            bodyRegex: req.bodyRegex,
          },
        });
        return { count: BigInt(count) };
      },
      async retryFailedJobs(req) {
        const count = await engine.retryFailedJobs({
          queue: req.queue,
          priority: req.priority,
          attemptsAllowed: req.attemptsAllowed,
          runAfter: timestampToMs(req.runAfter),
          limit: req.limit,
        });
        return { count: BigInt(count) };
      },
      async deleteJobs(req) {
        const count = await engine.deleteJobs({
          queue: req.queue,
          filter: { state: stateFromProto(req.state), priority: req.priority, bodyRegex: req.bodyRegex },
          limit: req.limit,
        });
        return { count: BigInt(count) };
      },
    })
    .service(QueueService, {
      async createQueue(req) {
        const { view, created } = await engine.createQueue(req.name, queueConfigFromProto(req.config));
        return { queue: counted(view), created };
      },
      async updateQueue(req) {
        const view = await engine.updateQueue(req.name, queueConfigFromProto(req.config), req.updateMask?.paths ?? []);
        return { queue: counted(view) };
      },
      async deleteQueue(req) {
        const deleted = await engine.deleteQueue(req.name);
        totals.forget(req.name);
        return { deleted };
      },
      async listQueues() {
        return { queues: (await engine.listQueues()).map(counted) };
      },
      async getQueue(req) {
        return { queue: counted(await engine.getQueue(req.name)) };
      },
    });
}

function deadlineLeft(ctx: HandlerContext): number {
  const left = ctx.timeoutMs();
  return left === undefined ? Number.POSITIVE_INFINITY : Math.max(0, left - DEADLINE_MARGIN_MS);
}

function callId(header: string | null): string | undefined {
  return header !== null && header !== "" && header.length <= CALL_ID_MAX_LENGTH ? header : undefined;
}
