/**
 * One job: its state, attempts, timestamps, claim deadline, custom status history and
 * body (text, pretty JSON or hex), read every 2 s while it is open.
 */
import { type Job, JobState } from "@runlater/sdk/gen/job_pb.js";
import type { ComponentChild } from "preact";
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { ErrorBanner, StateBadge } from "../components.js";
import {
  type BodyView,
  bodyHex,
  bodyJson,
  bodyText,
  count,
  dateTime,
  MAX_HEX_BYTES,
  MAX_TEXT_BYTES,
  span,
  timestampMs,
} from "../format.js";
import { usePoll } from "../poll.js";
import { href } from "../router.js";
import { attemptsUsed } from "./queue.js";

/** Job ids as the server hands them out are short; a longer one is refused before any call. */
const JOB_ID_MAX_CHARS = 256;

export function JobPage({ id }: { id: string }) {
  const { data, error } = usePoll(
    async (signal) => {
      if (id.length > JOB_ID_MAX_CHARS) return { job: undefined };
      const res = await api.jobs.getJobs({ jobIds: [id], includeBody: true }, { signal });
      return { job: res.jobs[0] };
    },
    2_000,
    [id],
  );
  const job = data?.job;
  return (
    <section>
      <p class="crumbs">
        <a href="#/">Queues</a> / {job && <a href={href("queues", job.queue)}>{job.queue}</a>} /
      </p>
      <h1>
        Job <span class="mono">{id.slice(0, JOB_ID_MAX_CHARS)}</span> {job && <StateBadge state={job.state} />}
      </h1>
      <ErrorBanner error={error} />
      {!data && !error && <p>Loading…</p>}
      {data && !job && <p role="status">No such job: it never existed, was deleted, or its retention ran out.</p>}
      {job && <JobDetails job={job} />}
    </section>
  );
}

function JobDetails({ job }: { job: Job }) {
  const now = Date.now();
  const claimEnds = timestampMs(job.claimExpiresAt);
  const rows: Array<[string, ComponentChild]> = [
    ["Queue", <a href={href("queues", job.queue)}>{job.queue}</a>],
    ["State", <StateBadge state={job.state} />],
    ["Priority", job.priority],
    [
      "Attempts",
      `${attemptsUsed(job.attemptsAllowed, job.attemptsRemaining)} used of ${job.attemptsAllowed} (${job.attemptsRemaining} left)`,
    ],
    ["Created", dateTime(job.createdAt)],
    ["Run after", dateTime(job.runAfter)],
    ["Last change", dateTime(job.updatedAt)],
    ["Finished", dateTime(job.finishedAt)],
    [
      "Claim deadline",
      job.state === JobState.RUNNING && claimEnds !== undefined
        ? `${dateTime(claimEnds)} (${claimEnds >= now ? `in ${span(claimEnds - now)}` : `${span(now - claimEnds)} ago`})`
        : "— (not running)",
    ],
    ["Claim owner", "not recorded by the server (the API has no worker id on a job)"],
    ["Ordering key", job.orderingKey || "—"],
  ];
  const history = job.customStatus === "" ? [] : job.customStatus.split("\n");
  return (
    <>
      <dl class="details">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      <h2>Custom status history</h2>
      {history.length === 0 ? (
        <p>None.</p>
      ) : (
        <ol class="history" aria-label="Custom status history">
          {history.map((line, i) => (
            <li key={i}>{line}</li>
          ))}
        </ol>
      )}
      <Body body={job.body} />
    </>
  );
}

function Body({ body }: { body: Uint8Array }) {
  const [view, setView] = useState<BodyView>(() => (bodyJson(body).ok ? "json" : "text"));
  const json = view === "json" ? bodyJson(body) : undefined;
  const cut = view === "hex" ? MAX_HEX_BYTES : MAX_TEXT_BYTES;
  return (
    <section aria-labelledby="body-title">
      <h2 id="body-title">Body ({count(body.length)} bytes)</h2>
      <fieldset class="tabs">
        <legend class="visually-hidden">Show the body as</legend>
        {(["text", "json", "hex"] as const).map((v) => (
          <button type="button" key={v} aria-pressed={view === v} onClick={() => setView(v)}>
            {v === "json" ? "JSON" : v === "hex" ? "Hex" : "Text"}
          </button>
        ))}
      </fieldset>
      {body.length === 0 ? (
        <p>Empty.</p>
      ) : (
        <>
          {json && !json.ok && <p class="notice">Not shown as JSON: {json.reason}.</p>}
          <section aria-label={`Body as ${view}`}>
            <pre class="body">{view === "hex" ? bodyHex(body) : json?.ok ? json.text : bodyText(body)}</pre>
          </section>
          {body.length > cut && (
            <p class="notice">
              Showing the first {count(cut)} of {count(body.length)} bytes.
            </p>
          )}
        </>
      )}
    </section>
  );
}
