/**
 * What each RPC needs (docs/security.md): a scope (or one of a few), and the queues it acts on so a token
 * limited to queue patterns can be checked. One table for every method of every public
 * service; a method missing from it is refused to every token (fail closed), so a new RPC
 * cannot ship unprotected.
 */

import { parseJobId } from "../domain/job-id.js";
import type { Scope } from "../domain/tokens.js";

/** The queues a request names; "any" when it is not about particular queues (the token must then be unrestricted). */
export type QueuesOf = (request: Record<string, unknown>) => string[] | "any";

export interface Access {
  /** The scope the method needs; a list: any one of them; "authenticated": any valid token will do. */
  scope: Scope | readonly Scope[] | "authenticated";
  queues: QueuesOf;
}

const none: QueuesOf = () => "any";
const queue: QueuesOf = (r) => [String(r.queue ?? "")];
const name: QueuesOf = (r) => [String(r.name ?? "")];
const jobsQueues: QueuesOf = (r) => ((r.jobs as Array<{ queue: string }> | undefined) ?? []).map((j) => j.queue);
const idsQueues: QueuesOf = (r) => ((r.jobIds as string[] | undefined) ?? []).map((id) => parseJobId(id)?.queue ?? "");

/** By procedure, `<package>.<Service>/<Method>`. */
export const ACCESS: Readonly<Record<string, Access>> = {
  "runlater.v1.JobService/Enqueue": { scope: "enqueue", queues: jobsQueues },
  "runlater.v1.JobService/GetJobs": { scope: "read", queues: idsQueues },
  "runlater.v1.JobService/ScanJobs": { scope: "read", queues: queue },
  "runlater.v1.JobService/CountJobs": { scope: "read", queues: queue },
  "runlater.v1.JobService/RetryFailedJobs": { scope: "admin", queues: queue },
  "runlater.v1.JobService/DeleteJobs": { scope: "admin", queues: queue },
  "runlater.v1.WorkerService/Dequeue": { scope: "work", queues: queue },
  // Every message of the stream is checked (the first names the queue).
  "runlater.v1.WorkerService/DequeueStream": { scope: "work", queues: queue },
  "runlater.v1.WorkerService/Ack": { scope: "work", queues: queue },
  "runlater.v1.WorkerService/Checkpoint": { scope: "work", queues: queue },
  "runlater.v1.QueueService/CreateQueue": { scope: "admin", queues: name },
  "runlater.v1.QueueService/UpdateQueue": { scope: "admin", queues: name },
  "runlater.v1.QueueService/DeleteQueue": { scope: "admin", queues: name },
  // A limited token sees the queues it may act on (the answer is filtered).
  "runlater.v1.QueueService/ListQueues": { scope: "read", queues: () => [] },
  // A worker checks its queue at start (and reads its claim timeout): work may read the queues it works on.
  "runlater.v1.QueueService/GetQueue": { scope: ["read", "work"], queues: name },
  // Workflows span queues: an unrestricted token (docs/security.md).
  "runlater.v1.WorkflowService/ApplyWorkflow": { scope: "admin", queues: none },
  "runlater.v1.WorkflowService/GetWorkflow": { scope: "read", queues: none },
  "runlater.v1.WorkflowService/ListWorkflows": { scope: "read", queues: none },
  "runlater.v1.WorkflowService/StartInstance": { scope: "enqueue", queues: none },
  "runlater.v1.WorkflowService/GetInstance": { scope: "read", queues: none },
  "runlater.v1.WorkflowService/ListInstances": { scope: "read", queues: none },
  "runlater.v1.WorkflowService/CancelInstance": { scope: "admin", queues: none },
  "runlater.v1.WorkflowService/CloseInstance": { scope: "admin", queues: none },
  "runlater.v1.WorkflowService/PostEvent": { scope: "enqueue", queues: none },
  "runlater.v1.WorkflowService/RerunJob": { scope: "admin", queues: none },
  "runlater.v1.WorkflowService/DisableJob": { scope: "admin", queues: none },
  "runlater.v1.WorkflowService/EnableJob": { scope: "admin", queues: none },
  // A schedule enqueues on its own for as long as it exists: admin to change, read to see.
  "runlater.v1.ScheduleService/CreateSchedule": { scope: "admin", queues: none },
  "runlater.v1.ScheduleService/UpdateSchedule": { scope: "admin", queues: none },
  "runlater.v1.ScheduleService/DeleteSchedule": { scope: "admin", queues: none },
  "runlater.v1.ScheduleService/GetSchedule": { scope: "read", queues: none },
  "runlater.v1.ScheduleService/ListSchedules": { scope: "read", queues: none },
  "runlater.v1.ScheduleService/PauseSchedule": { scope: "admin", queues: none },
  "runlater.v1.ScheduleService/ResumeSchedule": { scope: "admin", queues: none },
  "runlater.v1.ClusterInfoService/GetClusterInfo": { scope: "read", queues: none },
  "runlater.v1.TokenService/CreateToken": { scope: "admin", queues: none },
  "runlater.v1.TokenService/ListTokens": { scope: "admin", queues: none },
  "runlater.v1.TokenService/RevokeToken": { scope: "admin", queues: none },
  // A token may always learn about itself (the dashboard hides what it may not do).
  "runlater.v1.TokenService/WhoAmI": { scope: "authenticated", queues: () => [] },
};

/** Services between nodes and for tests: never reachable with a client token (the cluster secret). */
export const NODE_SERVICES = new Set(["runlater.cluster.v1.ClusterService", "runlater.testing.v1.TestControlService"]);
