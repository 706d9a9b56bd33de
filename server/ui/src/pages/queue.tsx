/**
 * One queue: live counts and throughput, pause/resume, its config (editable), a form to
 * enqueue a job, and its jobs by state with filters and paging, with bulk retry of failed
 * jobs and bulk delete behind a confirmation.
 */
import { JobState } from "@runlater/sdk/gen/job_pb.js";
import type { Queue, QueueConfig } from "@runlater/sdk/gen/queue_service_pb.js";
import { useMemo, useState } from "preact/hooks";
import { api, describeError } from "../api.js";
import { Allowed, Confirm, ErrorBanner, Markers, Notice, StateBadge } from "../components.js";
import { count, dateTime, durationMs, msToDuration, rate, span, stateNames } from "../format.js";
import { usePoll } from "../poll.js";
import { RateTracker } from "../rates.js";
import { href } from "../router.js";
import { type Cursor, clientFiltered, type Filters, MAX_EXAMINED, type Page, scanPage } from "../scan.js";
import { POLL_MS, ratesOf } from "./overview.js";

export function QueuePage({ name }: { name: string }) {
  const tracker = useMemo(() => new RateTracker(), []);
  const { data, error, refresh } = usePoll(
    async (signal) => {
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
        {name} {q && <Markers queue={q} />}
      </h1>
      <ErrorBanner error={error} />
      {!q && !error && <p>Loading…</p>}
      {q && (
        <>
          <Stats queue={q} rates={data.rates} />
          <Allowed action="queue.update">
            <PauseButton queue={q} onChanged={refresh} />
          </Allowed>
          <JobsBrowser queue={q} onChanged={refresh} />
          <div class="columns">
            <Allowed action="queue.update">
              <ConfigForm key={configKey(q.config)} queue={q} onSaved={refresh} />
            </Allowed>
            <Allowed action="job.enqueue">
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
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const paused = queue.config?.paused ?? false;
  const toggle = async () => {
    setBusy(true);
    try {
      await api.queues.updateQueue({
        name: queue.name,
        config: { paused: !paused },
        updateMask: { paths: ["paused"] },
      });
      setError(undefined);
      onChanged();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
  };
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
  claimTimeout: ReturnType<typeof msToDuration>;
  succeededRetention: ReturnType<typeof msToDuration>;
  failedRetention: ReturnType<typeof msToDuration>;
  retryPolicy: {
    initialDelay?: ReturnType<typeof msToDuration>;
    linearSteps?: number;
    maxDelay?: ReturnType<typeof msToDuration>;
  };
}

const seconds = (d: Parameters<typeof durationMs>[0]) => durationMs(d) / 1000;
const retry = (c: Partial<Writable>) => (c.retryPolicy ??= {});

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
  {
    key: "retry_initial_delay",
    label: "Retry: initial delay",
    mask: "retry_policy",
    unit: "s",
    min: 0,
    max: 365 * DAY_S,
    step: 0.001,
    read: (c) => seconds(c.retryPolicy?.initialDelay),
    write: (c, v) => (retry(c).initialDelay = msToDuration(v * 1000)),
  },
  {
    key: "retry_linear_steps",
    label: "Retry: linear steps",
    mask: "retry_policy",
    unit: "",
    min: 0,
    max: 1000,
    step: 1,
    read: (c) => c.retryPolicy?.linearSteps ?? 0,
    write: (c, v) => (retry(c).linearSteps = v),
    hint: "then doubling",
  },
  {
    key: "retry_max_delay",
    label: "Retry: max delay",
    mask: "retry_policy",
    unit: "s",
    min: 0,
    max: 365 * DAY_S,
    step: 0.001,
    read: (c) => seconds(c.retryPolicy?.maxDelay),
    write: (c, v) => (retry(c).maxDelay = msToDuration(v * 1000)),
  },
  {
    key: "default_attempts_allowed",
    label: "Attempts per job",
    mask: "default_attempts_allowed",
    unit: "",
    min: 1,
    max: 1000,
    step: 1,
    read: (c) => c.defaultAttemptsAllowed,
    write: (c, v) => (c.defaultAttemptsAllowed = v),
    hint: "for jobs that do not say",
  },
  {
    key: "claim_timeout",
    label: "Claim timeout",
    mask: "claim_timeout",
    unit: "s",
    min: 0.1,
    max: 7 * DAY_S,
    step: 0.001,
    read: (c) => seconds(c.claimTimeout),
    write: (c, v) => (c.claimTimeout = msToDuration(v * 1000)),
  },
  {
    key: "succeeded_retention",
    label: "Keep succeeded jobs",
    mask: "succeeded_retention",
    unit: "s",
    min: 0.001,
    max: 3650 * DAY_S,
    step: 0.001,
    read: (c) => seconds(c.succeededRetention),
    write: (c, v) => (c.succeededRetention = msToDuration(v * 1000)),
  },
  {
    key: "failed_retention",
    label: "Keep failed jobs",
    mask: "failed_retention",
    unit: "s",
    min: 0.001,
    max: 3650 * DAY_S,
    step: 0.001,
    read: (c) => seconds(c.failedRetention),
    write: (c, v) => (c.failedRetention = msToDuration(v * 1000)),
  },
  {
    key: "priorities",
    label: "Priority levels",
    mask: "priorities",
    unit: "",
    min: 1,
    max: 10,
    step: 1,
    read: (c) => c.priorities,
    write: (c, v) => (c.priorities = v),
    hint: "may only grow",
  },
  {
    key: "partitions",
    label: "Partitions",
    mask: "partitions",
    unit: "",
    min: 1,
    max: 256,
    step: 1,
    read: (c) => c.partitions,
    write: (c, v) => (c.partitions = v),
    hint: "may only grow",
  },
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
  const initial = useMemo(() => Object.fromEntries(configFields.map((f) => [f.key, String(f.read(config))])), [config]);
  const [values, setValues] = useState<Record<string, string>>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const changed = configFields.filter((f) => values[f.key] !== initial[f.key]);
  const save = async (e: Event) => {
    e.preventDefault();
    setDone(undefined);
    const update: Partial<Writable> = {};
    const mask = new Set<string>();
    // A retry policy is replaced whole: send its unchanged parts too.
    const fields = changed.some((f) => f.mask === "retry_policy")
      ? [...new Set([...changed, ...configFields.filter((f) => f.mask === "retry_policy")])]
      : changed;
    for (const f of fields) {
      const v = Number(values[f.key]);
      if (values[f.key]!.trim() === "" || !Number.isFinite(v) || v < f.min || v > f.max) {
        setError(`${f.label} must be a number from ${f.min} to ${f.max}${f.unit ? ` ${f.unit}` : ""}.`);
        return;
      }
      if (f.step === 1 && !Number.isInteger(v)) {
        setError(`${f.label} must be a whole number.`);
        return;
      }
      f.write(update, v);
      mask.add(f.mask);
    }
    if (mask.size === 0) return;
    setBusy(true);
    try {
      await api.queues.updateQueue({ name: queue.name, config: update, updateMask: { paths: [...mask] } });
      setError(undefined);
      setDone(`Saved ${[...mask].join(", ")}.`);
      onSaved();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
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
      <ErrorBanner error={error} />
      <Notice text={done} />
    </form>
  );
}

// ---- enqueue

/** Largest body typed here; the queue's max_body_bytes may be smaller (the server says so). */
const ENQUEUE_BODY_MAX_CHARS = 1024 * 1024;

function EnqueueForm({ queue, onEnqueued }: { queue: Queue; onEnqueued: () => void }) {
  const [body, setBody] = useState("");
  const [priority, setPriority] = useState("1");
  const [status, setStatus] = useState("");
  const [copies, setCopies] = useState("1");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const priorities = queue.config?.priorities ?? 1;
  const submit = async (e: Event) => {
    e.preventDefault();
    setDone(undefined);
    const n = Number(copies);
    if (!Number.isInteger(n) || n < 1 || n > 1000) {
      setError("Copies must be a whole number from 1 to 1000.");
      return;
    }
    setBusy(true);
    try {
      const bytes = new TextEncoder().encode(body);
      const spec = { queue: queue.name, body: bytes, priority: Number(priority), customStatus: status };
      const res = await api.jobs.enqueue({ jobs: Array.from({ length: n }, () => spec) });
      setError(undefined);
      setDone(n === 1 ? `Enqueued job ${res.jobIds[0]}.` : `Enqueued ${res.jobIds.length} jobs.`);
      onEnqueued();
    } catch (err) {
      setError(describeError(err));
    } finally {
      setBusy(false);
    }
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
      <ErrorBanner error={error} />
      <Notice text={done} />
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
          <Allowed action="jobs.retry">
            <button type="button" onClick={() => askBulk("retry")}>
              Retry failed jobs…
            </button>
          </Allowed>
        )}
        {state !== JobState.UNSPECIFIED && (
          <Allowed action="jobs.delete">
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
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col">State</th>
                <th scope="col" class="num">
                  Priority
                </th>
                <th scope="col" class="num">
                  Attempts
                </th>
                <th scope="col">Run after</th>
                <th scope="col">Created</th>
                <th scope="col">Custom status (latest)</th>
              </tr>
            </thead>
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
      <nav class="pager" aria-label="Pages">
        <button type="button" disabled={trail.length === 1} onClick={() => setTrail(trail.slice(0, -1))}>
          Previous page
        </button>
        <span>Page {trail.length}</span>
        <button type="button" disabled={!p?.next} onClick={() => p?.next && setTrail([...trail, p.next])}>
          Next page
        </button>
      </nav>
    </section>
  );
}

export function attemptsUsed(allowed: number, remaining: number): number {
  return allowed - remaining;
}
