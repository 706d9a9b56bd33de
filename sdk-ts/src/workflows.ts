/**
 * Workflows from code (docs/workflows.md): defineWorkflow() builds a definition that
 * client.applyWorkflow() sends; the instance helpers start, feed, read and wait for an
 * instance. Everything else is one call away on client.workflows (WorkflowService).
 */
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { encodeBody, type JobBody } from "./body.js";
import { MAX_RESULT_BYTES } from "./control.js";
import {
  type ExternalEvent,
  ExternalEventSchema,
  FailurePolicy,
  type Instance,
  InstanceState,
  type Workflow,
  type WorkflowInput,
  WorkflowSchema,
} from "./gen/runlater/v1/workflow_service_pb.js";

/** Bounds of a definition, as the server checks them (docs/workflows.md). */
const MAX_JOBS = 100;
const MAX_INPUTS = 10;
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * Where an input's events come from: a job's name (its successful runs), `{ job, seed:
 * true }` (that, holding one event at start: how a cycle gets going), or `{ external }`
 * (events posted from outside, by startInstance or postEvent).
 */
export type WorkflowInputSpec = string | { job: string; seed?: boolean } | { external: string };

/** One job of a workflow definition. */
export interface WorkflowJobOptions {
  /** The queue its runs are enqueued on (its ordinary workers take them). */
  queue: string;
  /** Its inputs; none: it runs once, at start. At most 10. */
  inputs?: readonly WorkflowInputSpec[];
  /** What a failed run does: "abort" the instance (the default) or "continue" without it. */
  onFailure?: "abort" | "continue";
  /** The body of each run's queue job: bytes, text (UTF-8) or a JSON value. */
  body?: JobBody;
  /** Priority of its queue jobs; default 1 (the highest). */
  priority?: number;
  /** Attempts of its queue jobs; default the queue's. */
  attemptsAllowed?: number;
}

/** A workflow definition being built: `defineWorkflow("etl").job(...).job(...)`. */
export class WorkflowBuilder {
  private readonly jobs = new Map<string, WorkflowJobOptions>();

  constructor(readonly name: string) {
    if (!NAME.test(name))
      throw new RangeError(`workflow name ${JSON.stringify(name)}: use 1 to 64 of A-Z a-z 0-9 _ . -`);
  }

  /** Adds a job; a job may name inputs from jobs added later (cycles are allowed). */
  job(name: string, options: WorkflowJobOptions): this {
    if (!NAME.test(name)) throw new RangeError(`job name ${JSON.stringify(name)}: use 1 to 64 of A-Z a-z 0-9 _ . -`);
    if (this.jobs.has(name)) throw new RangeError(`workflow ${this.name}: job ${name} is defined twice`);
    if (this.jobs.size >= MAX_JOBS) throw new RangeError(`workflow ${this.name}: at most ${MAX_JOBS} jobs`);
    if ((options.inputs?.length ?? 0) > MAX_INPUTS)
      throw new RangeError(
        `workflow ${this.name}: job ${name} has ${options.inputs?.length} inputs; at most ${MAX_INPUTS}`,
      );
    this.jobs.set(name, options);
    return this;
  }

  /** The runlater.v1.Workflow message; throws if an input names a job not defined. */
  build(): Workflow {
    if (this.jobs.size === 0) throw new RangeError(`workflow ${this.name}: define at least one job`);
    return create(WorkflowSchema, {
      name: this.name,
      jobs: [...this.jobs].map(([name, o]) => ({
        name,
        queue: o.queue,
        inputs: (o.inputs ?? []).map((i) => this.input(name, i)),
        onFailure: o.onFailure === "continue" ? FailurePolicy.CONTINUE : FailurePolicy.ABORT,
        body: o.body === undefined ? undefined : encodeBody(o.body),
        priority: o.priority,
        attemptsAllowed: o.attemptsAllowed,
      })),
    });
  }

  private input(job: string, i: WorkflowInputSpec): Omit<WorkflowInput, "$typeName"> {
    if (typeof i === "object" && "external" in i)
      return { source: { case: "external", value: i.external }, seed: false };
    const from = typeof i === "string" ? i : i.job;
    if (!this.jobs.has(from))
      throw new RangeError(`workflow ${this.name}: job ${job} takes input from ${from}, which is not defined`);
    return { source: { case: "job", value: from }, seed: typeof i === "object" && i.seed === true };
  }
}

/** Starts a workflow definition: `defineWorkflow("etl").job("extract", { queue: "etl" })`. */
export function defineWorkflow(name: string): WorkflowBuilder {
  return new WorkflowBuilder(name);
}

/** An event for an external input. */
export interface ExternalEventOptions {
  /** Carried as the triggering event's custom status. */
  customStatus?: string;
  /** Carried as the triggering event's result: bytes or text (UTF-8), at most 4 KiB. */
  result?: Uint8Array | string;
}

/** Builds an ExternalEvent, checking the result's bound before the server would. */
export function externalEvent(input: string, o: ExternalEventOptions = {}): ExternalEvent {
  const result = typeof o.result === "string" ? new TextEncoder().encode(o.result) : o.result;
  if (result && result.length > MAX_RESULT_BYTES)
    throw new RangeError(`event for input ${input}: result is ${result.length} bytes; at most ${MAX_RESULT_BYTES}`);
  return create(ExternalEventSchema, { input, customStatus: o.customStatus, result });
}

/** Options of client.startInstance. */
export interface StartInstanceOptions {
  /** Events for external inputs, by input name, posted at start. */
  events?: Readonly<Record<string, ExternalEventOptions>>;
  /** Do not end when nothing is runnable or running; end on CloseInstance. */
  keepOpen?: boolean;
}

/** Options of client.waitForInstance. */
export interface WaitForInstanceOptions {
  /** Give up after this long; default 60 s, at most 24 h. */
  timeoutMs?: number;
  /** How often to ask (GetInstance); default 500 ms, at least 10 ms. */
  pollIntervalMs?: number;
}

const DAY_MS = 86_400_000;

/**
 * Polls `get` until the instance has ended; throws ConnectError DEADLINE_EXCEEDED (naming
 * the instance and its state) when it still runs after the timeout.
 */
export async function pollUntilEnded(
  instanceId: string,
  get: () => Promise<Instance>,
  o: WaitForInstanceOptions = {},
): Promise<Instance> {
  const timeoutMs = o.timeoutMs ?? 60_000;
  const every = o.pollIntervalMs ?? 500;
  if (!(timeoutMs >= 0 && timeoutMs <= DAY_MS)) throw new RangeError(`timeoutMs ${timeoutMs}: 0 to ${DAY_MS}`);
  if (!(every >= 10 && every <= DAY_MS)) throw new RangeError(`pollIntervalMs ${every}: 10 to ${DAY_MS}`);
  const giveUpAt = Date.now() + timeoutMs;
  for (;;) {
    const instance = await get();
    if (instance.state !== InstanceState.RUNNING) return instance;
    const left = giveUpAt - Date.now();
    if (left <= 0)
      throw new ConnectError(
        `instance ${instanceId} still ${InstanceState[instance.state]} after ${timeoutMs} ms`,
        Code.DeadlineExceeded,
      );
    await new Promise((resolve) => setTimeout(resolve, Math.min(every, left)));
  }
}
