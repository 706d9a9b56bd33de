/**
 * Scenario files (conformance/scenarios/*.yaml): loading and validation. The schema is
 * code, not a separate JSON Schema, so the error messages can name the step and field:
 * see `stepSchemas` for every operation's fields. conformance/README.md explains the
 * format with an example.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { parse } from "yaml";
import { type SdkOp, sdkOps } from "../protocol.js";

export interface Step {
  /** Index in the scenario (0-based), for messages. */
  index: number;
  op: SdkOp | ControlOp;
  /** Which client runs it (SDK operations only). */
  actor?: string;
  /** Operation parameters as written (before $var substitution and body/time expansion). */
  params: Record<string, unknown>;
  /** Subset of the result to match; `{error: {...}}` expects a failure. Absent: just ok. */
  expect?: unknown;
  /** Repeat the (read-only) step until `expect` matches, for at most EVENTUALLY_MS. */
  eventually?: boolean;
  note?: string;
}

export type ControlOp = "advance_clock" | "net";
export const controlOps: readonly ControlOp[] = ["advance_clock", "net"];

/** The ops `eventually` may repeat: they change nothing. */
export const readOps: readonly SdkOp[] = [
  "get_jobs",
  "scan_jobs",
  "count_jobs",
  "get_queue",
  "list_queues",
  "get_instance",
  "get_schedule",
];

export interface Scenario {
  name: string;
  file: string;
  description: string;
  /** Items of reference/pinlater-behaviours.md §1 this scenario checks. */
  checklist: number[];
  steps: Step[];
}

// ---- a tiny schema language

type Check = (v: unknown, path: string, errors: string[]) => void;

const isVar = (v: unknown) => typeof v === "string" && /^\$[A-Za-z_]\w*$/.test(v);

const str: Check = (v, p, e) => {
  if (typeof v !== "string") e.push(`${p}: expected a string, got ${JSON.stringify(v)}`);
};
const int: Check = (v, p, e) => {
  if (!(typeof v === "number" && Number.isInteger(v)) && !isVar(v))
    e.push(`${p}: expected an integer, got ${JSON.stringify(v)}`);
};
const num: Check = (v, p, e) => {
  if (typeof v !== "number" && !isVar(v)) e.push(`${p}: expected a number, got ${JSON.stringify(v)}`);
};
const bool: Check = (v, p, e) => {
  if (typeof v !== "boolean") e.push(`${p}: expected true or false, got ${JSON.stringify(v)}`);
};
const oneOf =
  (...values: string[]): Check =>
  (v, p, e) => {
    if (typeof v !== "string" || !values.includes(v))
      e.push(`${p}: expected one of ${values.join(", ")}, got ${JSON.stringify(v)}`);
  };
const arr =
  (of: Check): Check =>
  (v, p, e) => {
    if (!Array.isArray(v)) return void e.push(`${p}: expected a list`);
    for (const [i, x] of v.entries()) of(x, `${p}[${i}]`, e);
  };
const obj =
  (fields: Record<string, Check>, required: string[] = []): Check =>
  (v, p, e) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return void e.push(`${p}: expected a mapping`);
    const o = v as Record<string, unknown>;
    for (const k of required) if (!(k in o)) e.push(`${p}: missing ${k}`);
    for (const [k, x] of Object.entries(o)) {
      const check = fields[k];
      if (!check) e.push(`${p}: unknown field ${k} (allowed: ${Object.keys(fields).join(", ")})`);
      else check(x, `${p}.${k}`, e);
    }
  };
/** Exactly one of `keys` present. */
const exactlyOne =
  (keys: string[], inner: Check): Check =>
  (v, p, e) => {
    inner(v, p, e);
    if (typeof v === "object" && v !== null) {
      const n = keys.filter((k) => k in v).length;
      if (n !== 1) e.push(`${p}: give exactly one of ${keys.join(", ")}`);
    }
  };

const state = oneOf("PENDING", "RUNNING", "SUCCEEDED", "FAILED");

/** A scripted handler's action (conformance/protocol.ts, HandlerAction). */
const action: Check = (v, p, e) => {
  const shapes: Record<string, Check> = {
    // result: text, sent as result_b64 (match.ts prepare)
    return: obj({ return: str, result: str, no_events: bool }, ["return"]),
    raise: obj({ raise: str }, ["raise"]),
    retry_after_ms: obj({ retry_after_ms: int, message: str }, ["retry_after_ms"]),
    do_not_retry: obj({ do_not_retry: str }, ["do_not_retry"]),
    snooze_ms: obj({ snooze_ms: int, status: str }, ["snooze_ms"]),
    wait: obj({ wait: str, do: action }, ["wait", "do"]),
    attempts: obj({ attempts: arr(action) }, ["attempts"]),
    runs: obj({ runs: arr(action) }, ["runs"]),
  };
  const kind = typeof v === "object" && v !== null ? Object.keys(shapes).find((k) => k in v) : undefined;
  if (!kind) return void e.push(`${p}: expected a handler action, one of ${Object.keys(shapes).join(", ")}`);
  shapes[kind]!(v, p, e);
};

const bodyFields = { body: str, body_b64: str, body_hex: str, body_size: int, body_json: action };
const queueConfig = obj({
  priorities: int,
  claim_timeout_ms: int,
  retry_policy: obj({ initial_delay_ms: int, linear_steps: int, max_delay_ms: int }),
  default_attempts_allowed: int,
  max_dequeue_per_second: num,
  paused: bool,
  succeeded_retention_ms: int,
  failed_retention_ms: int,
  fifo: bool,
  partitions: int,
  max_body_bytes: int,
});
const jobSpec = exactlyOne(
  Object.keys(bodyFields),
  obj(
    {
      queue: str,
      ...bodyFields,
      priority: int,
      run_after_ms: int,
      run_after_in_ms: int,
      attempts_allowed: int,
      idempotency_key: str,
      custom_status: str,
      ordering_key: str,
    },
    ["queue"],
  ),
);
const jobs: Check = (v, p, e) => {
  if (typeof v === "object" && v !== null && !Array.isArray(v)) {
    // {$repeat: N, job: {...}}: N copies of one job (e.g. a batch over the limit).
    obj({ $repeat: int, job: jobSpec }, ["$repeat", "job"])(v, p, e);
  } else arr(jobSpec)(v, p, e);
};
const success = obj({ job_id: str, claim_token: str, custom_status: str }, ["job_id", "claim_token"]);
const failure = obj({ job_id: str, claim_token: str, custom_status: str, retry_delay_ms: int, no_retry: bool }, [
  "job_id",
  "claim_token",
]);
const checkpoint = obj(
  {
    job_id: str,
    claim_token: str,
    extend_claim_by_ms: int,
    new_body: str,
    new_body_b64: str,
    new_body_size: int,
    move_to_pending: bool,
    run_after_ms: int,
    run_after_in_ms: int,
    attempts_allowed: int,
    custom_status: str,
  },
  ["job_id", "claim_token"],
);
const filter = { queue: str, state, priority: int, body_regex: str };
const workerOptions = obj({
  concurrency: int,
  batch_size: int,
  dequeue_mode: oneOf("stream", "poll"),
  poll_wait_ms: int,
  shutdown_grace_ms: int,
  ack_delay_ms: int,
});

const externalEvent = obj({ input: str, custom_status: str, result: str, result_b64: str }, ["input"]);
const workflowInput = exactlyOne(["job", "external"], obj({ job: str, seed: bool, external: str }));
const workflowJob = obj(
  {
    name: str,
    queue: str,
    inputs: arr(workflowInput),
    on_failure: oneOf("ABORT", "CONTINUE"),
    body: str,
    body_b64: str,
    body_json: action,
    priority: int,
    attempts_allowed: int,
  },
  ["name", "queue"],
);
const scheduleSpec = exactlyOne(
  ["workflow", "job"],
  obj(
    {
      name: str,
      cron: str,
      time_zone: str,
      workflow: obj({ workflow: str, events: arr(externalEvent), keep_open: bool }, ["workflow"]),
      job: obj({ queue: str, body: str, body_b64: str, priority: int, attempts_allowed: int }, ["queue"]),
      overlap: oneOf("SKIP", "ALLOW", "CANCEL_PREVIOUS"),
      catch_up: oneOf("NONE", "LATEST"),
      catch_up_window_ms: int,
    },
    ["name", "cron"],
  ),
);
const instanceId = { instance_id: str };

/** Parameters of each operation (besides actor, op, expect, note). */
export const stepSchemas: Record<SdkOp | ControlOp, Check> = {
  create_queue: obj({ queue: str, config: queueConfig }, ["queue"]),
  update_queue: obj({ queue: str, config: queueConfig }, ["queue", "config"]),
  delete_queue: obj({ queue: str }, ["queue"]),
  get_queue: obj({ queue: str }, ["queue"]),
  list_queues: obj({}),
  enqueue: obj({ jobs }, ["jobs"]),
  get_jobs: obj({ job_ids: arr(str), include_body: bool }, ["job_ids"]),
  scan_jobs: obj({ ...filter, future: bool, limit: int, page_token: str, include_body: bool }, ["queue"]),
  count_jobs: obj({ ...filter, future: bool }, ["queue"]),
  retry_failed_jobs: obj(
    { queue: str, priority: int, attempts_allowed: int, run_after_ms: int, run_after_in_ms: int, limit: int },
    ["queue"],
  ),
  delete_jobs: obj({ ...filter, limit: int }, ["queue", "state"]),
  dequeue: obj({ queue: str, limit: int, dry_run: bool, succeeded: arr(success), failed: arr(failure) }, ["queue"]),
  ack: obj({ queue: str, succeeded: arr(success), failed: arr(failure) }, ["queue"]),
  checkpoint: obj({ queue: str, checkpoints: arr(checkpoint) }, ["queue", "checkpoints"]),
  worker_start: obj({ queue: str, options: workerOptions }, ["queue"]),
  worker_stop: obj({ wait: bool }),
  worker_await: obj({ calls: int, finished: int, stopped: bool }),
  worker_release: obj({ gate: str }, ["gate"]),
  worker_defaults: obj({}),
  apply_workflow: obj({ workflow: obj({ name: str, jobs: arr(workflowJob) }, ["name", "jobs"]) }, ["workflow"]),
  start_instance: obj({ workflow: str, events: arr(externalEvent), keep_open: bool }, ["workflow"]),
  post_event: obj({ ...instanceId, event: externalEvent }, ["instance_id", "event"]),
  get_instance: obj(instanceId, ["instance_id"]),
  wait_instance: obj({ ...instanceId, timeout_ms: int }, ["instance_id", "timeout_ms"]),
  rerun_job: obj({ ...instanceId, job: str, run: int }, ["instance_id", "job", "run"]),
  disable_job: obj({ ...instanceId, job: str }, ["instance_id", "job"]),
  enable_job: obj({ ...instanceId, job: str }, ["instance_id", "job"]),
  close_instance: obj(instanceId, ["instance_id"]),
  cancel_instance: obj(instanceId, ["instance_id"]),
  create_schedule: obj({ schedule: scheduleSpec, paused: bool }, ["schedule"]),
  get_schedule: obj({ name: str }, ["name"]),
  advance_clock: obj({ ms: int }, ["ms"]),
  net: obj({ action: oneOf("sever", "hold", "down", "up"), when_held: bool }, ["action"]),
};

const stepKeys = new Set(["op", "actor", "expect", "note", "eventually"]);

/** Validates a parsed scenario document; returns the errors (empty when valid). */
export function validateScenario(doc: unknown, file: string): { scenario?: Scenario; errors: string[] } {
  const errors: string[] = [];
  const name = basename(file).replace(/\.ya?ml$/, "");
  if (typeof doc !== "object" || doc === null) return { errors: [`${file}: not a mapping`] };
  const d = doc as Record<string, unknown>;
  obj(
    {
      name: str,
      description: str,
      checklist: arr(int),
      steps: (v, p, e) => (Array.isArray(v) ? undefined : e.push(`${p}: expected a list of steps`)),
    },
    ["name", "description", "steps"],
  )(d, file, errors);
  if (d.name !== name) errors.push(`${file}: name must be the file name without .yaml ("${name}")`);
  const steps: Step[] = [];
  for (const [index, raw] of (Array.isArray(d.steps) ? d.steps : []).entries()) {
    const p = `${file}: steps[${index}]`;
    if (typeof raw !== "object" || raw === null) {
      errors.push(`${p}: expected a mapping`);
      continue;
    }
    const s = raw as Record<string, unknown>;
    const op = s.op as SdkOp | ControlOp;
    const isSdk = (sdkOps as readonly string[]).includes(op);
    const isControl = (controlOps as readonly string[]).includes(op);
    if (!isSdk && !isControl) {
      errors.push(
        `${p}: unknown op ${JSON.stringify(s.op)} (SDK: ${sdkOps.join(", ")}; control: ${controlOps.join(", ")})`,
      );
      continue;
    }
    if (isSdk && typeof s.actor !== "string")
      errors.push(`${p} (${op}): missing actor (the name of the client running it, e.g. producer or worker1)`);
    if (isControl && "actor" in s) errors.push(`${p} (${op}): control steps have no actor (the runner does them)`);
    if (isControl && "expect" in s) errors.push(`${p} (${op}): control steps have no expect`);
    if ("note" in s) str(s.note, `${p}.note`, errors);
    if ("eventually" in s) {
      bool(s.eventually, `${p}.eventually`, errors);
      if (!(readOps as readonly string[]).includes(op))
        errors.push(`${p} (${op}): eventually repeats read-only steps only (${readOps.join(", ")})`);
      else if (!("expect" in s)) errors.push(`${p} (${op}): eventually needs an expect to wait for`);
    }
    if (op === "net" && s.when_held === true && s.action !== "sever")
      errors.push(`${p} (net): when_held goes with action sever`);
    const params = Object.fromEntries(Object.entries(s).filter(([k]) => !stepKeys.has(k)));
    stepSchemas[op](params, `${p} (${op})`, errors);
    steps.push({
      index,
      op,
      actor: s.actor as string | undefined,
      params,
      expect: s.expect,
      eventually: s.eventually === true,
      note: s.note as string | undefined,
    });
  }
  if (errors.length > 0) return { errors };
  return {
    scenario: {
      name,
      file,
      description: d.description as string,
      checklist: (d.checklist as number[] | undefined) ?? [],
      steps,
    },
    errors,
  };
}

/** Loads and validates every scenario in `dir`; throws with every error found. */
export function loadScenarios(dir: string): Scenario[] {
  const files = readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort();
  const all: Scenario[] = [];
  const errors: string[] = [];
  for (const f of files) {
    const path = relative(process.cwd(), join(dir, f));
    let doc: unknown;
    try {
      doc = parse(readFileSync(path, "utf8"));
    } catch (err) {
      errors.push(`${path}: YAML: ${(err as Error).message}`);
      continue;
    }
    const r = validateScenario(doc, path);
    errors.push(...r.errors);
    if (r.scenario) all.push(r.scenario);
  }
  if (errors.length > 0) throw new Error(`invalid scenarios:\n  ${errors.join("\n  ")}`);
  return all;
}
