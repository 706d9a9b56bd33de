/**
 * createRunlaterClient: the generated service clients over one transport, plus the few
 * conveniences nearly every producer wants (enqueue with a JS body, create a queue, and the
 * workflow and schedule helpers of workflow-calls.ts). Anything else is one call away on
 * `jobs`, `worker`, `queues`, `workflows` and `schedules`.
 */
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { type Client, createClient, type Transport } from "@connectrpc/connect";
import { encodeBody, type JobBody } from "./body.js";
import { type JobSpec, JobSpecSchema } from "./gen/runlater/v1/job_pb.js";
import { JobService } from "./gen/runlater/v1/job_service_pb.js";
import { type CreateQueueResponse, QueueService } from "./gen/runlater/v1/queue_service_pb.js";
import { ScheduleService } from "./gen/runlater/v1/schedule_service_pb.js";
import { WorkerService } from "./gen/runlater/v1/worker_service_pb.js";
import { WorkflowService } from "./gen/runlater/v1/workflow_service_pb.js";
import { type QueueOptions, queueConfigFromOptions } from "./queue-options.js";
import { activeTraceparent } from "./tracing.js";
import { openTransport, type TransportOptions } from "./transport.js";
import { type WorkflowCalls, workflowCalls } from "./workflow-calls.js";

export type RunlaterClientOptions = TransportOptions;

/** Optional settings of one job; unset means the queue's default. */
export interface EnqueueOptions {
  /** 1 is the highest priority; default 1. */
  priority?: number;
  /** Earliest time the job may run; default now. */
  runAfter?: Date;
  /** Attempts in all (first run plus retries); default the queue's (11). */
  attemptsAllowed?: number;
  /** A repeat enqueue with the same key returns the first job's id and creates nothing. */
  idempotencyKey?: string;
  /** Initial custom status. */
  customStatus?: string;
  /**
   * Jobs of a queue that share an ordering key run one at a time, in enqueue order: the
   * next is handed out only after the one before it succeeded or failed for good (or was
   * deleted). Different keys run in parallel. At most 128 characters. Ignored on FIFO
   * queues, where the whole queue is one sequence.
   */
  orderingKey?: string;
  /**
   * The W3C traceparent to store with the job, which the worker continues the trace of
   * (docs/tracing.md). Default: the active OpenTelemetry span's, when `@opentelemetry/api`
   * is installed and a span is active; "" stores none.
   */
  traceparent?: string;
}

/** One job for enqueueMany. */
export interface EnqueueSpec extends EnqueueOptions {
  queue: string;
  body: JobBody;
}

export interface RunlaterClient extends WorkflowCalls {
  /** runlater.v1.JobService: Enqueue, GetJobs, ScanJobs, CountJobs, RetryFailedJobs, DeleteJobs. */
  readonly jobs: Client<typeof JobService>;
  /** runlater.v1.WorkerService: Dequeue, Ack, Checkpoint (the Worker class drives these for you). */
  readonly worker: Client<typeof WorkerService>;
  /** runlater.v1.QueueService: CreateQueue, UpdateQueue, DeleteQueue, ListQueues, GetQueue. */
  readonly queues: Client<typeof QueueService>;
  /** runlater.v1.WorkflowService: workflows and their instances (docs/workflows.md). */
  readonly workflows: Client<typeof WorkflowService>;
  /** runlater.v1.ScheduleService: cron schedules that start instances or enqueue jobs. */
  readonly schedules: Client<typeof ScheduleService>;
  /** Enqueues one job and returns its id. A string body is sent as UTF-8, an object as JSON. */
  enqueue(queue: string, body: JobBody, options?: EnqueueOptions): Promise<string>;
  /** Enqueues up to 1,000 jobs in one all-or-nothing call; ids come back in order. */
  enqueueMany(specs: readonly EnqueueSpec[]): Promise<string[]>;
  /** Creates a queue (idempotent: an existing queue is returned unchanged, created = false). */
  createQueue(name: string, options?: QueueOptions): Promise<CreateQueueResponse>;
  /** Whether the transport carries bidirectional streams (HTTP/2 with Connect or gRPC): Worker's stream mode. */
  readonly streams: boolean;
  /** The server's URL, as given. */
  readonly baseUrl: string;
  /** The options the client was created with (a Worker makes its own HTTP/2 client from them). */
  readonly options: Readonly<RunlaterClientOptions>;
  /** Ends the HTTP/2 session, if the client opened one. HTTP/1.1 clients need no closing. */
  close(): void;
}

/** The transport of each client createRunlaterClient made (the Worker reads its stream through it). */
const transports = new WeakMap<RunlaterClient, Transport>();

/** The transport `client` was made with, if createRunlaterClient made it. */
export function transportOf(client: RunlaterClient): Transport | undefined {
  return transports.get(client);
}

export function createRunlaterClient(baseUrl: string, options: RunlaterClientOptions = {}): RunlaterClient {
  const { transport, streams, close } = openTransport(baseUrl, options);
  const jobs = createClient(JobService, transport);
  const worker = createClient(WorkerService, transport);
  const queues = createClient(QueueService, transport);
  const workflows = createClient(WorkflowService, transport);
  const schedules = createClient(ScheduleService, transport);
  const enqueueMany = async (specs: readonly EnqueueSpec[]) => {
    const traceparent = activeTraceparent(); // read before any await: the caller's span
    return (await jobs.enqueue({ jobs: specs.map((s) => toJobSpec(s, traceparent)) })).jobIds;
  };
  const client: RunlaterClient = {
    jobs,
    worker,
    queues,
    workflows,
    schedules,
    streams,
    baseUrl,
    options: Object.freeze({ ...options }),
    enqueueMany,
    async enqueue(queue, body, opts = {}) {
      const [id] = await enqueueMany([{ ...opts, queue, body }]);
      if (id === undefined) throw new Error("Enqueue returned no job id");
      return id;
    },
    createQueue: (name, opts = {}) => queues.createQueue({ name, config: queueConfigFromOptions(opts) }),
    ...workflowCalls(workflows, schedules),
    close,
  };
  transports.set(client, transport);
  return client;
}

function toJobSpec(s: EnqueueSpec, activeTraceparent: string): JobSpec {
  return create(JobSpecSchema, {
    queue: s.queue,
    body: encodeBody(s.body),
    priority: s.priority,
    runAfter: s.runAfter && timestampFromDate(s.runAfter),
    attemptsAllowed: s.attemptsAllowed,
    idempotencyKey: s.idempotencyKey,
    customStatus: s.customStatus,
    orderingKey: s.orderingKey,
    traceparent: s.traceparent ?? activeTraceparent,
  });
}
