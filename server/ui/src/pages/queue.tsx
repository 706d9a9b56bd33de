/**
 * One queue: live counts and throughput, pause/resume, its config (editable), a form to
 * enqueue a job, and its jobs by state with filters and paging, with bulk retry of failed
 * jobs and bulk delete behind a confirmation.
 */
import { Code, ConnectError } from "@connectrpc/connect";
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import type { Queue, QueueConfig } from "@runlater/sdk/gen/queue_service_pb.js";
import { useEffect, useMemo, useState } from "preact/hooks";
import { useAction } from "../action.js";
import { api, describeError } from "../api.js";
import { Allowed, Confirm, ErrorBanner, Head, Markers, Notice, Outcome, Pager, StateBadge } from "../components.js";
import { count, dateTime, durationMs, msToDuration, rate, span, stateNames } from "../format.js";
import { usePoll } from "../poll.js";
import { RateTracker } from "../rates.js";
import { href } from "../router.js";
import { type Cursor, clientFiltered, type Filters, MAX_EXAMINED, type Page, scanPage } from "../scan.js";
import { POLL_MS, QUEUE_NAME, ratesOf } from "./overview.js";

export function QueuePage({ name }: { name: string }) {
  const tracker = useMemo(() => new RateTracker(), []);
  const { data, error, refresh } = usePoll(
    async (signal) => {
      if (!QUEUE_NAME.test(name))
        throw new ConnectError(
          `"${name.slice(0, 80)}" is not a queue name (1 to 64 letters, digits or underscores)`,
          Code.InvalidArgument,
        );
      const { queue } = await api.queues.getQueue({ name }, { signal });
      return { queue: queue!, rates: ratesOf(tracker, queue!, Date.now()) };
    },
    POLL_MS,
    [name],
  );
  const q = data?.queue;
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Queues</a> /
      </p>
      <h1>
        {name.slice(0, 64)} {q && <Markers queue={q} />}
      </h1>
      <ErrorBanner error={error} />
      {!q && !error && <p>Loading…</p>}
      {q && (
        <>
          <Stats queue={q} rates={data.rates} />
          <Allowed action="queue.update" queue={q.name}>
            <PauseButton queue={q} onChanged={refresh} />
          </Allowed>
          <JobsBrowser queue={q} onChanged={refresh} />
          <div class="columns">
            <Allowed action="queue.update" queue={q.name}>
              <ConfigForm queue={q} onSaved={refresh} />
            </Allowed>
            <Allowed action="job.enqueue" queue={q.name}>
              <EnqueueForm queue={q} onEnqueued={refresh} />
            </Allowed>
          </div>
        </>
      )}
    </section>
  );
}

function Stats({ queue, rates }: { queue: Queue; rates: ReturnType<typeof ratesOf> }) {
  const s = queue.stats;
  const age = durationMs(s?.oldestPendingAge);
  const cells: Array<[string, string, string]> = [
    ["pending", "Pending", count(s?.pending ?? 0n)],
    ["scheduled", "Scheduled", count(s?.scheduled ?? 0n)],
    ["running", "Running", count(s?.running ?? 0n)],
    ["succeeded", "Succeeded", count(s?.succeeded ?? 0n)],
    ["failed", "Failed", count(s?.failed ?? 0n)],
    ["oldest", "Oldest pending", age > 0 ? span(age) : "—"],
    ["enqueued-rate", "Enqueued/s", rate(rates?.enqueued)],
    ["succeeded-rate", "Succeeded/s", rate(rates?.succeeded)],
    ["failed-rate", "Failed attempts/s", rate(rates?.failed)],
  ];
  return (
    <dl class="stats" aria-label="Queue stats">
      {cells.map(([key, label, value]) => (
        <div key={key} data-stat={key}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

function PauseButton({ queue, onChanged }: { queue: Queue; onChanged: () => void }) {
  const { busy, error, run } = useAction();
  const paused = queue.config?.paused ?? false;
  const toggle = () =>
    run(async () => {
      await api.queues.updateQueue({
        name: queue.name,
        config: { paused: !paused },
        updateMask: { paths: ["paused"] },
      });
      onChanged();
      return undefined;
    });
  return (
    <p class="toolbar">
      <button type="button" onClick={toggle} disabled={busy}>
        {paused ? "Resume queue" : "Pause queue"}
      </button>
      <span class="hint">
        {paused ? "Paused: accepts enqueues and acks, hands out nothing." : "Running: hands out due jobs."}
      </span>
      <ErrorBanner error={error} />
    </p>
  );
}

// ---- config

const DAY_S = 86_400;

/** An editable config field: how it reads from and writes to QueueConfig, and its bounds. */
interface Field {
  key: string;
  label: string;
  /** The update_mask path it belongs to. */
  mask: string;
  unit: "s" | "jobs/s" | "";
  min: number;
  max: number;
  step: number;
  read: (c: QueueConfig) => number;
  write: (c: Partial<Writable>, v: number) => void;
  hint?: string;
}

interface Writable {
  maxDequeuePerSecond: number;
  defaultAttemptsAllowed: number;
  priorities: number;
  partitions: number;
  claimTimeout: DurationValue;
  succeededRetention: DurationValue;
  failedRetention: DurationValue;
  retryPolicy: {
    initialDelay?: DurationValue;
    linearSteps?: number;
    maxDelay?: DurationValue;
  };
}

type DurationValue = ReturnType<typeof msToDuration>;
const retry = (c: Partial<Writable>) => (c.retryPolicy ??= {});

/** A duration, typed in seconds (to the millisecond). */
function secondsField(
  key: string,
  label: string,
  mask: string,
  range: [number, number],
  get: (c: QueueConfig) => Parameters<typeof durationMs>[0],
  set: (c: Partial<Writable>, d: DurationValue) => void,
): Field {
  const [min, max] = range;
  return {
    key,
    label,
    mask,
    unit: "s",
    min,
    max,
    step: 0.001,
    read: (c) => durationMs(get(c)) / 1000,
    write: (c, v) => set(c, msToDuration(v * 1000)),
  };
}

/** A whole number. */
function wholeField(
  key: string,
  label: string,
  range: [number, number],
  read: (c: QueueConfig) => number,
  write: (c: Partial<Writable>, v: number) => void,
  hint: string,
  mask = key,
): Field {
  const [min, max] = range;
  return { key, label, mask, unit: "", min, max, step: 1, read, write, hint };
}

export const configFields: Field[] = [
  {
    key: "max_dequeue_per_second",
    label: "Rate limit",
    mask: "max_dequeue_per_second",
    unit: "jobs/s",
    min: 0,
    max: 1_000_000,
    step: 0.1,
    read: (c) => c.maxDequeuePerSecond,
    write: (c, v) => (c.maxDequeuePerSecond = v),
    hint: "0 is unlimited",
  },
  secondsField(
    "retry_initial_delay",
    "Retry: initial delay",
    "retry_policy",
    [0, 365 * DAY_S],
    (c) => c.retryPolicy?.initialDelay,
    (c, d) => (retry(c).initialDelay = d),
  ),
  wholeField(
    "retry_linear_steps",
    "Retry: linear steps",
    [0, 1000],
    (c) => c.retryPolicy?.linearSteps ?? 0,
    (c, v) => (retry(c).linearSteps = v),
    "then doubling",
    "retry_policy",
  ),
  secondsField(
    "retry_max_delay",
    "Retry: max delay",
    "retry_policy",
    [0, 365 * DAY_S],
    (c) => c.retryPolicy?.maxDelay,
    (c, d) => (retry(c).maxDelay = d),
  ),
  wholeField(
    "default_attempts_allowed",
    "Attempts per job",
    [1, 1000],
    (c) => c.defaultAttemptsAllowed,
    (c, v) => (c.defaultAttemptsAllowed = v),
    "for jobs that do not say",
  ),
  secondsField(
    "claim_timeout",
    "Claim timeout",
    "claim_timeout",
    [0.1, 7 * DAY_S],
    (c) => c.claimTimeout,
    (c, d) => (c.claimTimeout = d),
  ),
  secondsField(
    "succeeded_retention",
    "Keep succeeded jobs",
    "succeeded_retention",
    [0.001, 3650 * DAY_S],
    (c) => c.succeededRetention,
    (c, d) => (c.succeededRetention = d),
  ),
  secondsField(
    "failed_retention",
    "Keep failed jobs",
    "failed_retention",
    [0.001, 3650 * DAY_S],
    (c) => c.failedRetention,
    (c, d) => (c.failedRetention = d),
  ),
  wholeField(
    "priorities",
    "Priority levels",
    [1, 10],
    (c) => c.priorities,
    (c, v) => (c.priorities = v),
    "may only grow",
  ),
  wholeField(
    "partitions",
    "Partitions",
    [1, 256],
    (c) => c.partitions,
    (c, v) => (c.partitions = v),
    "may only grow",
  ),
];

function configKey(c: QueueConfig | undefined): string {
  return c ? configFields.map((f) => f.read(c)).join("|") : "";
}

/**
 * The config as a form. Only changed fields are sent (update_mask names them; a retry
 * policy is sent whole when any of its parts changed). Values are bounded here as the
 * server bounds them; the server's refusal, if any, is shown as it says it.
 */
function ConfigForm({ queue, onSaved }: { queue: Queue; onSaved: () => void }) {
  const config = queue.config!;
  // The form follows the queue's config when it changes (a save, or another user's edit),
  // not on every poll: a new answer with the same config keeps what is being typed.
  const key = configKey(config);
  const initial = useMemo(() => Object.fromEntries(configFields.map((f) => [f.key, String(f.read(config))])), [key]);
  const [values, setValues] = useState<Record<string, string>>(initial);
  useEffect(() => setValues(initial), [initial]);
  const { busy, error, done, run, refuse } = useAction();
  const changed = configFields.filter((f) => values[f.key] !== initial[f.key]);
  const save = (e: Event) => {
    e.preventDefault();
    const update: Partial<Writable> = {};
    const mask = new Set<string>();
    // A retry policy is replaced whole: send its unchanged parts too.
    const fields = changed.some((f) => f.mask === "retry_policy")
      ? [...new Set([...changed, ...configFields.filter((f) => f.mask === "retry_policy")])]
      : changed;
    for (const f of fields) {
      const v = Number(values[f.key]);
      if (values[f.key]!.trim() === "" || !Number.isFinite(v) || v < f.min || v > f.max)
        return refuse(`${f.label} must be a number from ${f.min} to ${f.max}${f.unit ? ` ${f.unit}` : ""}.`);
      if (f.step === 1 && !Number.isInteger(v)) return refuse(`${f.label} must be a whole number.`);
      f.write(update, v);
      mask.add(f.mask);
    }
    if (mask.size === 0) return;
    void run(async () => {
      await api.queues.updateQueue({ name: queue.name, config: update, updateMask: { paths: [...mask] } });
      onSaved();
      return `Saved ${[...mask].join(", ")}.`;
    });
  };
  return (
    <form class="config" onSubmit={save} aria-labelledby="config-title">
      <h2 id="config-title">Configuration</h2>
      {configFields.map((f) => {
        const v = Number(values[f.key]);
        return (
          <label key={f.key}>
            <span>{f.label}</span>
            <input
              name={f.key}
              type="number"
              inputMode="decimal"
              min={f.min}
              max={f.max}
              step={f.step}
              required
              value={values[f.key]}
              onInput={(e) => setValues({ ...values, [f.key]: e.currentTarget.value })}
            />
            <small>
              {f.unit}
              {f.unit === "s" && Number.isFinite(v) && v >= 60 ? ` (${span(v * 1000)})` : ""}
              {f.hint ? ` ${f.hint}` : ""}
            </small>
          </label>
        );
      })}
      <p class="static">
        FIFO: {config.fifo ? "yes" : "no"} (fixed at create) · Largest body: {count(config.maxBodyBytes)} bytes
      </p>
      <div class="actions">
        <button type="submit" disabled={busy || changed.length === 0}>
          Save configuration
        </button>
        <button type="button" disabled={busy || changed.length === 0} onClick={() => setValues(initial)}>
          Undo changes
        </button>
      </div>
      <Outcome error={error} done={done} />
    </form>
  );
}

// ---- enqueue

/** Largest body typed here; the queue's max_body_bytes may be smaller (the server says so). */
const ENQUEUE_BODY_MAX_CHARS = 1024 * 1024;
/** Bodies × copies in one enqueue from the form (the server takes up to 64 MiB per request). */
const ENQUEUE_TOTAL_MAX_BYTES = 16 * 1024 * 1024;

function EnqueueForm({ queue, onEnqueued }: { queue: Queue; onEnqueued: () => void }) {
  const [body, setBody] = useState("");
  const [priority, setPriority] = useState("1");
  const [status, setStatus] = useState("");
  const [copies, setCopies] = useState("1");
  const { busy, error, done, run, refuse } = useAction();
  const priorities = queue.config?.priorities ?? 1;
  const submit = (e: Event) => {
    e.preventDefault();
    const n = Number(copies);
    if (!Number.isInteger(n) || n < 1 || n > 1000) return refuse("Copies must be a whole number from 1 to 1000.");
    const bytes = new TextEncoder().encode(body);
    if (bytes.length * n > ENQUEUE_TOTAL_MAX_BYTES)
      return refuse(`That is ${count(bytes.length * n)} bytes of bodies: at most 16 MiB per enqueue from here.`);
    void run(async () => {
      const spec = { queue: queue.name, body: bytes, priority: Number(priority), customStatus: status };
      const res = await api.jobs.enqueue({ jobs: Array.from({ length: n }, () => spec) });
      onEnqueued();
      return n === 1 ? `Enqueued job ${res.jobIds[0]}.` : `Enqueued ${res.jobIds.length} jobs.`;
    });
  };
  return (
    <form class="enqueue" onSubmit={submit} aria-labelledby="enqueue-title">
      <h2 id="enqueue-title">Enqueue a job</h2>
      <label>
        <span>Body (text)</span>
        <textarea
          name="body"
          rows={4}
          maxLength={ENQUEUE_BODY_MAX_CHARS}
          value={body}
          onInput={(e) => setBody(e.currentTarget.value)}
        />
      </label>
      <label>
        <span>Priority</span>
        <select name="priority" value={priority} onChange={(e) => setPriority(e.currentTarget.value)}>
          {Array.from({ length: priorities }, (_, i) => (
            <option key={i} value={String(i + 1)}>
              {i + 1}
              {i === 0 ? " (highest)" : ""}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Custom status</span>
        <input name="custom-status" maxLength={1000} value={status} onInput={(e) => setStatus(e.currentTarget.value)} />
      </label>
      <label>
        <span>Copies</span>
        <input
          name="copies"
          type="number"
          min={1}
          max={1000}
          step={1}
          value={copies}
          onInput={(e) => setCopies(e.currentTarget.value)}
        />
      </label>
      <div class="actions">
        <button type="submit" disabled={busy}>
          Enqueue
        </button>
      </div>
      <Outcome error={error} done={done} />
    </form>
  );
}

// ---- jobs

const STATES = [JobState.UNSPECIFIED, JobState.PENDING, JobState.RUNNING, JobState.SUCCEEDED, JobState.FAILED];
const PAGE_SIZES = [25, 50, 100];

/** The filter form's text, before it is checked and applied. */
interface FilterForm {
  priority: string;
  bodyRegex: string;
  customStatus: string;
  from: string;
  to: string;
}

const emptyForm: FilterForm = { priority: "0", bodyRegex: "", customStatus: "", from: "", to: "" };

function parseFilters(state: JobState, f: FilterForm): Filters | string {
  if (f.bodyRegex.length > 256) return "The body search is at most 256 characters.";
  if (f.customStatus.length > 1000) return "The custom status search is at most 1000 characters.";
  const from = f.from === "" ? undefined : Date.parse(f.from);
  const to = f.to === "" ? undefined : Date.parse(f.to);
  if (Number.isNaN(from) || Number.isNaN(to)) return "The time range needs valid dates.";
  if (from !== undefined && to !== undefined && from > to) return "The time range ends before it starts.";
  return {
    state,
    priority: Number(f.priority),
    bodyRegex: f.bodyRegex,
    customStatus: f.customStatus,
    from,
    // A datetime-local has minute precision: "to" includes that whole minute.
    to: to === undefined ? undefined : to + 59_999,
  };
}

type Bulk = { kind: "retry"; count: bigint } | { kind: "delete"; count: bigint };

function JobsBrowser({ queue, onChanged }: { queue: Queue; onChanged: () => void }) {
  const [state, setState] = useState<JobState>(JobState.UNSPECIFIED);
  const [form, setForm] = useState<FilterForm>(emptyForm);
  const [applied, setApplied] = useState<FilterForm>(emptyForm);
  const [size, setSize] = useState(25);
  /** Cursors of the pages before this one (for "Previous"), and this page's. */
  const [trail, setTrail] = useState<Cursor[]>([{ token: "", skip: 0 }]);
  const [bulk, setBulk] = useState<Bulk | undefined>();
  const [bulkBusy, setBulkBusy] = useState(false);
  const [notice, setNotice] = useState<string | undefined>();
  const [actionError, setActionError] = useState<string | undefined>();
  const filters = parseFilters(state, applied);
  const filterError = typeof filters === "string" ? filters : undefined;
  const cursor = trail[trail.length - 1]!;
  const key = JSON.stringify([queue.name, state, applied, size, cursor]);
  const page = usePoll<Page | undefined>(
    (signal) =>
      typeof filters === "string"
        ? Promise.resolve(undefined)
        : scanPage(api, queue.name, filters, size, cursor, signal),
    // Client-side filtering may take many calls: refresh it less often.
    typeof filters !== "string" && clientFiltered(filters) ? 10_000 : 2_000,
    [key],
  );
  const restart = () => setTrail([{ token: "", skip: 0 }]);
  const priorities = queue.config?.priorities ?? 1;
  const failed = queue.stats?.failed ?? 0n;

  const askBulk = async (kind: Bulk["kind"]) => {
    setNotice(undefined);
    setActionError(undefined);
    if (typeof filters === "string") return;
    try {
      const res = await api.jobs.countJobs({
        queue: queue.name,
        state: kind === "retry" ? JobState.FAILED : filters.state,
        priority: filters.priority,
        bodyRegex: kind === "retry" ? "" : filters.bodyRegex,
      });
      setBulk({ kind, count: res.count });
    } catch (err) {
      setActionError(describeError(err));
    }
  };
  const runBulk = async () => {
    if (!bulk || typeof filters === "string") return;
    setBulkBusy(true);
    const limit = Number(bulk.count > 100_000n ? 100_000n : bulk.count);
    try {
      if (bulk.kind === "retry") {
        const res = await api.jobs.retryFailedJobs({ queue: queue.name, priority: filters.priority, limit });
        setNotice(`Moved ${count(res.count)} failed jobs back to pending.`);
      } else {
        const res = await api.jobs.deleteJobs({
          queue: queue.name,
          state: filters.state,
          priority: filters.priority,
          bodyRegex: filters.bodyRegex,
          limit,
        });
        setNotice(`Deleted ${count(res.count)} ${stateNames[filters.state]} jobs.`);
      }
      setActionError(undefined);
      setBulk(undefined);
      onChanged();
      page.refresh();
    } catch (err) {
      setBulk(undefined);
      setActionError(describeError(err));
    } finally {
      setBulkBusy(false);
    }
  };

  const p = page.data;
  const priorityText = typeof filters !== "string" && filters.priority > 0 ? ` of priority ${filters.priority}` : "";
  return (
    <section class="jobs" aria-labelledby="jobs-title">
      <h2 id="jobs-title">Jobs</h2>
      <fieldset class="tabs">
        <legend class="visually-hidden">State</legend>
        {STATES.map((s) => (
          <button
            type="button"
            key={s}
            aria-pressed={state === s}
            onClick={() => {
              setState(s);
              restart();
            }}
          >
            {s === JobState.UNSPECIFIED ? "All" : stateNames[s]}
          </button>
        ))}
      </fieldset>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(e) => {
          e.preventDefault();
          setApplied(form);
          restart();
        }}
      >
        <label>
          <span>Priority</span>
          <select
            name="filter-priority"
            value={form.priority}
            onChange={(e) => setForm({ ...form, priority: e.currentTarget.value })}
          >
            <option value="0">any</option>
            {Array.from({ length: priorities }, (_, i) => (
              <option key={i} value={String(i + 1)}>
                {i + 1}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Body matches (RE2)</span>
          <input
            name="filter-body"
            maxLength={256}
            value={form.bodyRegex}
            onInput={(e) => setForm({ ...form, bodyRegex: e.currentTarget.value })}
          />
        </label>
        <label>
          <span>Custom status contains</span>
          <input
            name="filter-status"
            maxLength={1000}
            value={form.customStatus}
            onInput={(e) => setForm({ ...form, customStatus: e.currentTarget.value })}
          />
        </label>
        <label>
          <span>Run after, from</span>
          <input
            name="filter-from"
            type="datetime-local"
            value={form.from}
            onInput={(e) => setForm({ ...form, from: e.currentTarget.value })}
          />
        </label>
        <label>
          <span>to</span>
          <input
            name="filter-to"
            type="datetime-local"
            value={form.to}
            onInput={(e) => setForm({ ...form, to: e.currentTarget.value })}
          />
        </label>
        <label>
          <span>Per page</span>
          <select
            name="page-size"
            value={String(size)}
            onChange={(e) => {
              setSize(Number(e.currentTarget.value));
              restart();
            }}
          >
            {PAGE_SIZES.map((n) => (
              <option key={n} value={String(n)}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button
            type="button"
            onClick={() => {
              setForm(emptyForm);
              setApplied(emptyForm);
              restart();
            }}
          >
            Clear
          </button>
        </div>
      </form>
      <div class="toolbar">
        {failed > 0n && (
          <Allowed action="jobs.retry" queue={queue.name}>
            <button type="button" onClick={() => askBulk("retry")}>
              Retry failed jobs…
            </button>
          </Allowed>
        )}
        {state !== JobState.UNSPECIFIED && (
          <Allowed action="jobs.delete" queue={queue.name}>
            <button type="button" class="danger" onClick={() => askBulk("delete")}>
              Delete {stateNames[state]} jobs…
            </button>
          </Allowed>
        )}
      </div>
      <ErrorBanner error={filterError ?? actionError ?? page.error} />
      <Notice text={notice} />
      {bulk && typeof filters !== "string" && (
        <Confirm
          title={bulk.kind === "retry" ? "Retry failed jobs?" : `Delete ${stateNames[filters.state]} jobs?`}
          confirmLabel={bulk.kind === "retry" ? "Retry" : "Delete"}
          busy={bulkBusy}
          onCancel={() => setBulk(undefined)}
          onConfirm={runBulk}
        >
          {bulk.kind === "retry" ? (
            <p>
              {count(bulk.count)} failed jobs{priorityText} in <strong>{queue.name}</strong> go back to pending with
              fresh attempts{bulk.count > 100_000n ? " (the oldest 100,000 failures now; click again for more)" : ""}.
            </p>
          ) : (
            <p>
              {count(bulk.count)} {stateNames[filters.state]} jobs{priorityText}
              {filters.bodyRegex ? " whose body matches the search" : ""} in <strong>{queue.name}</strong> are deleted
              for good{bulk.count > 100_000n ? " (100,000 now; click again for more)" : ""}.
              {clientFiltered(filters) ? " The custom status and time filters do not apply to deletion." : ""}
              {filters.state === JobState.RUNNING ? " Their workers' acks will come back NOT_FOUND." : ""}
            </p>
          )}
        </Confirm>
      )}
      {!p && !page.error && !filterError && <p>Loading…</p>}
      {p && p.jobs.length === 0 && <p>No jobs match.</p>}
      {p && p.jobs.length > 0 && (
        <div class="scroll">
          <table class="job-list" aria-label="Jobs">
            <Head
              columns={["Job", "State", "#Priority", "#Attempts", "Run after", "Created", "Custom status (latest)"]}
            />
            <tbody>
              {p.jobs.map((j) => (
                <tr key={j.jobId}>
                  <td>
                    <a class="mono" href={href("jobs", j.jobId)}>
                      {j.jobId}
                    </a>
                  </td>
                  <td>
                    <StateBadge state={j.state} />
                  </td>
                  <td class="num">{j.priority}</td>
                  <td class="num">
                    {attemptsUsed(j.attemptsAllowed, j.attemptsRemaining)} / {j.attemptsAllowed}
                  </td>
                  <td>{dateTime(j.runAfter)}</td>
                  <td>{dateTime(j.createdAt)}</td>
                  <td class="status">{j.customStatus.split("\n").pop()}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {p?.budgetSpent && (
        <p class="notice" role="status">
          Looked at {count(MAX_EXAMINED)} jobs for this page and found {p.jobs.length} that match; “Next page” looks
          further.
        </p>
      )}
      <Pager
        page={trail.length}
        hasNext={!!p?.next}
        onPrevious={() => setTrail(trail.slice(0, -1))}
        onNext={() => p?.next && setTrail([...trail, p.next])}
      />
    </section>
  );
}

export function attemptsUsed(allowed: number, remaining: number): number {
  return allowed - remaining;
}
