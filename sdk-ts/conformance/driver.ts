/**
 * Conformance driver for the TypeScript SDK: reads one JSON request a line on stdin,
 * runs it through @runlater/sdk's public API, writes one JSON response a line on stdout.
 * No assertions here: conformance/runner does all the matching. Protocol:
 * conformance/protocol.md (types in conformance/protocol.ts). The worker layer (ops
 * worker_*) runs the SDK's own Worker with the scripted handler at the end of this file.
 *
 *   npx tsx sdk-ts/conformance/driver.ts
 */
import { createInterface } from "node:readline";
import { durationFromMs, type Timestamp, timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  createRunlaterClient,
  type DequeuedJob,
  DoNotRetry,
  ErrorReason,
  errorInfo,
  type HandlerResult,
  type Job,
  type JobOutcome,
  JobState,
  Outcome,
  type Queue,
  RetryAfter,
  type RunlaterClient,
  type RunlaterClientOptions,
  snooze,
  success,
  Worker,
  type WorkerJob,
} from "@runlater/sdk";
import type {
  CheckpointJson,
  DriverRequest,
  DriverResponse,
  FailureJson,
  HandlerAction,
  HandlerCallJson,
  JobStateName,
  QueueConfigJson,
  SdkRequest,
  SuccessJson,
  WireProtocol,
  WorkerOptionsJson,
} from "../../conformance/protocol.js";
import { runWorkflowOp, workflowContextJson } from "./workflow-ops.js";

let target:
  | { url: string; workerUrl: string; protocol: WireProtocol; token: string | undefined; caFile: string | undefined }
  | undefined;
const actors = new Map<string, RunlaterClient>();

/**
 * Client options for the current wire protocol (HTTP version left to the SDK's choice),
 * with the token and CA of a secure run.
 */
function clientOptions(): RunlaterClientOptions {
  if (!target) throw new Error("no connect request yet");
  const { protocol, token, caFile } = target;
  return {
    protocol: protocol === "connect-json" || protocol === "connect-binary" ? "connect" : protocol,
    binary: protocol === "connect-json" ? false : undefined,
    token,
    tls: caFile === undefined ? undefined : { caFile },
  };
}

function client(actor: string): RunlaterClient {
  let c = actors.get(actor);
  if (!c) {
    if (!target) throw new Error("no connect request yet");
    c = createRunlaterClient(target.url, { ...clientOptions(), timeoutMs: 30_000 });
    actors.set(actor, c);
  }
  return c;
}

function closeAll(): void {
  for (const c of actors.values()) c.close();
  actors.clear();
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64");
const bytes = (s: string | undefined) => (s === undefined ? undefined : new Uint8Array(Buffer.from(s, "base64")));
const ms = (t: Timestamp | undefined) => (t ? timestampDate(t).getTime() : null);
const dur = (d: { seconds: bigint; nanos: number } | undefined) =>
  d ? Number(d.seconds) * 1000 + Math.trunc(d.nanos / 1e6) : 0;
const state = (s: JobStateName | undefined) => (s === undefined ? undefined : JobState[s]);
const stateName = (s: JobState) => JobState[s];

function queueConfig(c: QueueConfigJson = {}) {
  return {
    priorities: c.priorities,
    claimTimeout: c.claim_timeout_ms === undefined ? undefined : durationFromMs(c.claim_timeout_ms),
    retryPolicy: c.retry_policy && {
      initialDelay:
        c.retry_policy.initial_delay_ms === undefined ? undefined : durationFromMs(c.retry_policy.initial_delay_ms),
      linearSteps: c.retry_policy.linear_steps,
      maxDelay: c.retry_policy.max_delay_ms === undefined ? undefined : durationFromMs(c.retry_policy.max_delay_ms),
    },
    defaultAttemptsAllowed: c.default_attempts_allowed,
    maxDequeuePerSecond: c.max_dequeue_per_second,
    paused: c.paused,
    succeededRetention: c.succeeded_retention_ms === undefined ? undefined : durationFromMs(c.succeeded_retention_ms),
    failedRetention: c.failed_retention_ms === undefined ? undefined : durationFromMs(c.failed_retention_ms),
    fifo: c.fifo,
    partitions: c.partitions,
    maxBodyBytes: c.max_body_bytes,
  };
}

const configPaths: Record<keyof QueueConfigJson, string> = {
  priorities: "priorities",
  claim_timeout_ms: "claim_timeout",
  retry_policy: "retry_policy",
  default_attempts_allowed: "default_attempts_allowed",
  max_dequeue_per_second: "max_dequeue_per_second",
  paused: "paused",
  succeeded_retention_ms: "succeeded_retention",
  failed_retention_ms: "failed_retention",
  fifo: "fifo",
  partitions: "partitions",
  max_body_bytes: "max_body_bytes",
};

function queueJson(q: Queue | undefined) {
  const c = q?.config;
  const s = q?.stats;
  return {
    name: q?.name ?? "",
    config: {
      priorities: c?.priorities ?? 0,
      claim_timeout_ms: dur(c?.claimTimeout),
      retry_policy: {
        initial_delay_ms: dur(c?.retryPolicy?.initialDelay),
        linear_steps: c?.retryPolicy?.linearSteps ?? 0,
        max_delay_ms: dur(c?.retryPolicy?.maxDelay),
      },
      default_attempts_allowed: c?.defaultAttemptsAllowed ?? 0,
      max_dequeue_per_second: c?.maxDequeuePerSecond ?? 0,
      paused: c?.paused ?? false,
      succeeded_retention_ms: dur(c?.succeededRetention),
      failed_retention_ms: dur(c?.failedRetention),
      fifo: c?.fifo ?? false,
      partitions: c?.partitions ?? 0,
      max_body_bytes: c?.maxBodyBytes ?? 0,
    },
    stats: {
      pending: Number(s?.pending ?? 0),
      scheduled: Number(s?.scheduled ?? 0),
      running: Number(s?.running ?? 0),
      succeeded: Number(s?.succeeded ?? 0),
      failed: Number(s?.failed ?? 0),
    },
  };
}

const jobJson = (j: Job) => ({
  job_id: j.jobId,
  queue: j.queue,
  state: stateName(j.state),
  priority: j.priority,
  body_b64: b64(j.body),
  run_after_ms: ms(j.runAfter),
  attempts_allowed: j.attemptsAllowed,
  attempts_remaining: j.attemptsRemaining,
  custom_status: j.customStatus,
  created_at_ms: ms(j.createdAt),
  updated_at_ms: ms(j.updatedAt),
  claim_expires_at_ms: ms(j.claimExpiresAt),
  finished_at_ms: ms(j.finishedAt),
  ordering_key: j.orderingKey,
});

const dequeuedJson = (j: DequeuedJob) => ({
  job_id: j.jobId,
  body_b64: b64(j.body),
  priority: j.priority,
  attempt: j.attempt,
  attempts_allowed: j.attemptsAllowed,
  claim_token: j.claimToken,
  claim_expires_at_ms: ms(j.claimExpiresAt),
  created_at_ms: ms(j.createdAt),
  custom_status: j.customStatus,
});

const outcomeJson = (o: JobOutcome) => ({ job_id: o.jobId, outcome: Outcome[o.outcome] });

function ackRequest(queue: string, succeeded: SuccessJson[] = [], failed: FailureJson[] = []) {
  return {
    queue,
    succeeded: succeeded.map((s) => ({ jobId: s.job_id, claimToken: s.claim_token, customStatus: s.custom_status })),
    failed: failed.map((f) => ({
      jobId: f.job_id,
      claimToken: f.claim_token,
      customStatus: f.custom_status,
      retryDelay: f.retry_delay_ms === undefined ? undefined : durationFromMs(f.retry_delay_ms),
      noRetry: f.no_retry,
    })),
  };
}

function checkpoint(c: CheckpointJson) {
  return {
    jobId: c.job_id,
    claimToken: c.claim_token,
    extendClaimBy: c.extend_claim_by_ms === undefined ? undefined : durationFromMs(c.extend_claim_by_ms),
    newBody: bytes(c.new_body_b64),
    moveToPending: c.move_to_pending,
    runAfter: c.run_after_ms === undefined ? undefined : timestampFromMs(c.run_after_ms),
    attemptsAllowed: c.attempts_allowed,
    customStatus: c.custom_status,
  };
}

async function run(actor: string, r: SdkRequest): Promise<Record<string, unknown>> {
  if (r.op.startsWith("worker_")) return runWorker(actor, r);
  const c = client(actor);
  switch (r.op) {
    case "create_queue": {
      const res = await c.createQueue(r.queue, {
        priorities: r.config?.priorities,
        claimTimeoutMs: r.config?.claim_timeout_ms,
        retryPolicy: r.config?.retry_policy && {
          initialDelayMs: r.config.retry_policy.initial_delay_ms,
          linearSteps: r.config.retry_policy.linear_steps,
          maxDelayMs: r.config.retry_policy.max_delay_ms,
        },
        defaultAttemptsAllowed: r.config?.default_attempts_allowed,
        maxDequeuePerSecond: r.config?.max_dequeue_per_second,
        paused: r.config?.paused,
        succeededRetentionMs: r.config?.succeeded_retention_ms,
        failedRetentionMs: r.config?.failed_retention_ms,
        fifo: r.config?.fifo,
        partitions: r.config?.partitions,
        maxBodyBytes: r.config?.max_body_bytes,
      });
      return { created: res.created, queue: queueJson(res.queue) };
    }
    case "update_queue": {
      const paths = (Object.keys(r.config) as Array<keyof QueueConfigJson>).map((k) => configPaths[k]);
      const res = await c.queues.updateQueue({ name: r.queue, config: queueConfig(r.config), updateMask: { paths } });
      return { queue: queueJson(res.queue) };
    }
    case "delete_queue":
      return { deleted: (await c.queues.deleteQueue({ name: r.queue })).deleted };
    case "get_queue":
      return { queue: queueJson((await c.queues.getQueue({ name: r.queue })).queue) };
    case "list_queues":
      return { queues: (await c.queues.listQueues({})).queues.map(queueJson) };
    case "enqueue": {
      const ids = await c.enqueueMany(
        r.jobs.map((j) => ({
          queue: j.queue,
          body: bytes(j.body_b64) ?? new Uint8Array(),
          priority: j.priority,
          runAfter: j.run_after_ms === undefined ? undefined : new Date(j.run_after_ms),
          attemptsAllowed: j.attempts_allowed,
          idempotencyKey: j.idempotency_key,
          customStatus: j.custom_status,
          orderingKey: j.ordering_key,
        })),
      );
      return { job_ids: ids };
    }
    case "get_jobs": {
      const res = await c.jobs.getJobs({ jobIds: r.job_ids, includeBody: r.include_body });
      return { jobs: res.jobs.map(jobJson) };
    }
    case "scan_jobs": {
      const res = await c.jobs.scanJobs({
        queue: r.queue,
        state: state(r.state),
        priority: r.priority,
        future: r.future,
        bodyRegex: r.body_regex,
        limit: r.limit,
        pageToken: r.page_token,
        includeBody: r.include_body,
      });
      return { jobs: res.jobs.map(jobJson), next_page_token: res.nextPageToken };
    }
    case "count_jobs": {
      const res = await c.jobs.countJobs({
        queue: r.queue,
        state: state(r.state),
        priority: r.priority,
        future: r.future,
        bodyRegex: r.body_regex,
      });
      return { count: Number(res.count) };
    }
    case "retry_failed_jobs": {
      const res = await c.jobs.retryFailedJobs({
        queue: r.queue,
        priority: r.priority,
        attemptsAllowed: r.attempts_allowed,
        runAfter: r.run_after_ms === undefined ? undefined : timestampFromMs(r.run_after_ms),
        limit: r.limit,
      });
      return { count: Number(res.count) };
    }
    case "delete_jobs": {
      const res = await c.jobs.deleteJobs({
        queue: r.queue,
        state: state(r.state),
        priority: r.priority,
        bodyRegex: r.body_regex,
        limit: r.limit,
      });
      return { count: Number(res.count) };
    }
    case "dequeue": {
      const piggyBack = r.succeeded?.length || r.failed?.length ? ackRequest("", r.succeeded, r.failed) : undefined;
      const res = await c.worker.dequeue({ queue: r.queue, limit: r.limit, dryRun: r.dry_run, ack: piggyBack });
      return { jobs: res.jobs.map(dequeuedJson), ack_results: (res.ack?.results ?? []).map(outcomeJson) };
    }
    case "ack":
      return { results: (await c.worker.ack(ackRequest(r.queue, r.succeeded, r.failed))).results.map(outcomeJson) };
    case "checkpoint":
      return {
        results: (
          await c.worker.checkpoint({ queue: r.queue, checkpoints: r.checkpoints.map(checkpoint) })
        ).results.map(outcomeJson),
      };
    default: {
      const res = await runWorkflowOp(c, r);
      if (res === undefined) throw new Error(`unknown op ${r.op}`);
      return res;
    }
  }
}

function snake(code: Code): string {
  return Code[code].replace(/[A-Z]/g, (m, i: number) => (i === 0 ? m.toLowerCase() : `_${m.toLowerCase()}`));
}

async function handle(req: DriverRequest): Promise<DriverResponse> {
  try {
    if (req.op === "connect") {
      await resetWorkers();
      closeAll();
      target = {
        url: req.url,
        workerUrl: req.worker_url ?? req.url,
        protocol: req.protocol,
        token: req.token,
        caFile: req.tls_ca,
      };
      return { ok: true };
    }
    if (req.op === "reset") {
      await resetWorkers();
      return { ok: true };
    }
    if (req.op === "clock") {
      serverNow = req.now_ms;
      return { ok: true };
    }
    if (req.op === "shutdown") {
      await resetWorkers();
      closeAll();
      return { ok: true };
    }
    return { ok: true, ...(await run(req.actor, req)) };
  } catch (err) {
    if (err instanceof ConnectError) {
      const info = errorInfo(err);
      const reason = info && info.reason !== ErrorReason.UNSPECIFIED ? ErrorReason[info.reason] : undefined;
      return {
        ok: false,
        error: { code: snake(err.code), reason, field: info?.field || undefined, message: err.rawMessage },
      };
    }
    return {
      ok: false,
      error: { code: "driver_error", message: String(err instanceof Error ? (err.stack ?? err.message) : err) },
    };
  }
}

// ---- the worker layer: the SDK's own Worker, with the scripted handler

/** The server's (manual) clock, as the runner last said: every worker's clock. */
let serverNow = Date.now();

interface RunningWorker {
  worker: Worker;
  calls: HandlerCallJson[];
  stopped: boolean;
  stopping?: Promise<void>;
}
const workers = new Map<string, RunningWorker>();

/** Gates handlers wait on: opened by worker_release, all opened by reset. */
const gates = new Map<string, { open: boolean; promise: Promise<void>; resolve: () => void }>();
function gate(name: string) {
  let g = gates.get(name);
  if (!g) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    g = { open: false, promise, resolve };
    gates.set(name, g);
  }
  return g;
}

/** Wakes worker_await calls when a handler starts or returns or a worker stops. */
const waiters: Array<() => void> = [];
function changed(): void {
  for (const wake of waiters.splice(0)) wake();
}

/** The scripted handler: the job's body says what to do (conformance/protocol.ts, HandlerAction). */
async function act(action: HandlerAction | undefined, job: WorkerJob): Promise<HandlerResult> {
  if (typeof action !== "object" || action === null) return;
  if ("attempts" in action) return act(action.attempts[Math.min(job.attempt, action.attempts.length) - 1], job);
  if ("wait" in action) {
    const aborted = new Promise<never>((_, reject) => {
      if (job.signal.aborted) reject(job.signal.reason);
      job.signal.addEventListener("abort", () => reject(job.signal.reason), { once: true });
    });
    await Promise.race([gate(action.wait).promise, aborted]); // given up: stop waiting
    return act(action.do, job);
  }
  if ("runs" in action) return act(action.runs[Math.min(job.workflow?.run ?? 1, action.runs.length) - 1], job);
  if ("return" in action) {
    if (action.result_b64 === undefined && action.no_events === undefined) return action.return;
    return success({ customStatus: action.return, result: bytes(action.result_b64), noEvents: action.no_events });
  }
  if ("raise" in action) throw new Error(action.raise);
  if ("retry_after_ms" in action) throw new RetryAfter(action.retry_after_ms, action.message ?? "");
  if ("do_not_retry" in action) throw new DoNotRetry(action.do_not_retry);
  if ("snooze_ms" in action) return snooze(action.snooze_ms, action.status ?? "");
}

function handlerFor(calls: HandlerCallJson[]) {
  return async (job: WorkerJob): Promise<HandlerResult> => {
    const call = {
      job_id: job.id,
      attempt: job.attempt,
      body_b64: b64(job.body),
      finished: false,
      workflow: workflowContextJson(job.workflow),
    };
    calls.push(call);
    changed();
    let action: HandlerAction | undefined;
    try {
      action = JSON.parse(job.text()) as HandlerAction;
    } catch {
      action = undefined;
    }
    try {
      return await act(action, job);
    } finally {
      call.finished = true;
      changed();
    }
  };
}

function workerOptions(o: WorkerOptionsJson = {}) {
  return {
    concurrency: o.concurrency,
    batchSize: o.batch_size,
    dequeueMode: o.dequeue_mode,
    pollWaitMs: o.poll_wait_ms,
    shutdownGraceMs: o.shutdown_grace_ms,
    ackDelayMs: o.ack_delay_ms,
  };
}

async function runWorker(actor: string, r: SdkRequest): Promise<Record<string, unknown>> {
  if (!target) throw new Error("no connect request yet");
  const running = workers.get(actor);
  switch (r.op) {
    case "worker_start": {
      if (running) throw new Error(`${actor} already runs a worker`);
      const calls: HandlerCallJson[] = [];
      // No default deadline: the worker's stream lives as long as the worker.
      const worker = new Worker({
        client: createRunlaterClient(target.workerUrl, clientOptions()),
        queue: r.queue,
        handler: handlerFor(calls),
        clock: () => serverNow,
        ...workerOptions(r.options),
      });
      try {
        await worker.start();
      } catch (err) {
        await worker.stop();
        throw err;
      }
      workers.set(actor, { worker, calls, stopped: false });
      return {};
    }
    case "worker_stop": {
      if (!running) throw new Error(`${actor} runs no worker`);
      running.stopping ??= running.worker.stop().then(() => {
        running.stopped = true;
        changed();
      });
      if (r.wait !== false) await running.stopping;
      return {};
    }
    case "worker_await": {
      if (!running) throw new Error(`${actor} runs no worker`);
      const done = () =>
        running.calls.length >= (r.calls ?? 0) &&
        running.calls.filter((c) => c.finished).length >= (r.finished ?? 0) &&
        (!r.stopped || running.stopped);
      const giveUpAt = Date.now() + 20_000;
      while (!done() && Date.now() < giveUpAt) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, giveUpAt - Date.now());
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return { calls: running.calls.map((c) => ({ ...c })), stopped: running.stopped };
    }
    case "worker_release": {
      const g = gate(r.gate);
      g.open = true;
      g.resolve();
      return {};
    }
    case "worker_defaults": {
      const worker = new Worker({
        client: createRunlaterClient(target.workerUrl, clientOptions()),
        queue: "defaults",
        handler: async () => {},
      });
      const s = worker.settings;
      await worker.stop(); // never started: closes its own session, if it opened one
      return {
        concurrency: s.concurrency,
        batch_size: s.batchSize,
        dequeue_mode: s.dequeueMode,
        poll_wait_ms: s.pollWaitMs,
        shutdown_grace_ms: s.shutdownGraceMs,
        ack_delay_ms: s.ackDelayMs,
      };
    }
    default:
      throw new Error(`unknown op ${r.op}`);
  }
}

/** Stops every worker at once (gates opened first, so blocked handlers end), forgets everything. */
async function resetWorkers(): Promise<void> {
  for (const g of gates.values()) g.resolve();
  await Promise.all([...workers.values()].map((w) => (w.stopping ??= w.worker.stop()).catch(() => undefined)));
  workers.clear();
  gates.clear();
  changed();
}

const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
for await (const line of lines) {
  if (line.trim() === "") continue;
  const req = JSON.parse(line) as DriverRequest;
  const res = await handle(req);
  process.stdout.write(`${JSON.stringify(res)}\n`);
  if (req.op === "shutdown") break;
}
closeAll();
