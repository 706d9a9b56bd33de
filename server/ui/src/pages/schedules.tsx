/**
 * Schedules (ScheduleService): the list, with each schedule's cron, time zone, what it
 * starts, next fire and paused state; and one schedule with its next fire times and its
 * latest fires. Pause and resume on both, and a form that creates one; read every POLL_MS.
 */
import { FireOutcome, OverlapPolicy, type Schedule } from "@runlater/sdk/gen/schedule_service_pb.js";
import { useState } from "preact/hooks";
import { useAction } from "../action.js";
import { api } from "../api.js";
import { Allowed, Badge, ErrorBanner, Head, Outcome, Pager } from "../components.js";
import { bodyText, count, dateTime, span, timestampMs, zonedDateTime } from "../format.js";
import { usePoll } from "../poll.js";
import { href } from "../router.js";
import { POLL_MS } from "./workflows.js";

const PAGE_SIZE = 50;
/** Next fire times the schedule page lists. */
const UPCOMING = 10;

export function SchedulesPage() {
  const [trail, setTrail] = useState<string[]>([""]);
  const pageToken = trail.at(-1)!;
  const { data, error, refresh } = usePoll(
    (signal) => api.schedules.listSchedules({ limit: PAGE_SIZE, pageToken }, { signal }),
    POLL_MS,
    [pageToken],
  );
  const now = Date.now();
  return (
    <section>
      <h1>Schedules</h1>
      <ErrorBanner error={error} />
      {!data && !error && <p>Loading…</p>}
      {data && data.schedules.length === 0 && (
        <p>
          No schedules yet: make one below, with <code>runlater schedule create</code> or with
          ScheduleService.CreateSchedule.
        </p>
      )}
      {data && data.schedules.length > 0 && (
        <div class="scroll">
          <table class="schedules" aria-label="Schedules">
            <Head columns={["Schedule", "Cron", "Time zone", "Starts", "Next fire", "#Fires", "Last started", ""]} />
            <tbody>
              {data.schedules.map((s) => (
                <tr key={s.name} data-schedule={s.name}>
                  <th scope="row">
                    <a href={href("schedules", s.name)}>{s.name}</a>{" "}
                    {s.paused && <span class="badge paused">paused</span>}
                  </th>
                  <td class="mono">{s.cron}</td>
                  <td>{s.timeZone || "UTC"}</td>
                  <td>
                    <Target schedule={s} />
                  </td>
                  <td class="next-fire">{nextFire(s, now)}</td>
                  <td class="num">{count(s.fires)}</td>
                  <td class="mono">
                    <Started schedule={s} id={s.lastStarted} />
                  </td>
                  <td>
                    <Allowed action="schedule.pause">
                      <PauseButton schedule={s} onDone={refresh} />
                    </Allowed>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        page={trail.length}
        hasNext={!!data?.nextPageToken}
        onPrevious={() => setTrail(trail.slice(0, -1))}
        onNext={() => data?.nextPageToken && setTrail([...trail, data.nextPageToken])}
      />
      <Allowed action="schedule.create">
        <CreateSchedule onCreated={refresh} />
      </Allowed>
    </section>
  );
}

/**
 * A new schedule: name, cron, time zone, what it starts and the overlap policy. The server
 * checks every field (a cron it cannot parse, a zone it does not know, a workflow or queue
 * that does not exist) and its message is shown as it is; catch-up is left to the CLI and
 * the API (docs/workflows.md#schedules).
 */
function CreateSchedule({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState("");
  const [cron, setCron] = useState("");
  const [timeZone, setTimeZone] = useState("UTC");
  const [kind, setKind] = useState<"workflow" | "job">("workflow");
  const [target, setTarget] = useState("");
  const [overlap, setOverlap] = useState(OverlapPolicy.SKIP);
  const { busy, error, done, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.schedules.createSchedule({
        schedule: {
          name,
          cron,
          timeZone,
          overlap,
          target:
            kind === "workflow"
              ? { case: "workflow", value: { workflow: target } }
              : { case: "job", value: { queue: target } },
        },
      });
      setName("");
      onCreated();
      return `Schedule ${name} created.`;
    });
  };
  return (
    <form class="inline" onSubmit={submit} aria-label="Create a schedule">
      <h2>Create a schedule</h2>
      <label>
        Name
        <input value={name} maxLength={64} required onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label>
        Cron
        <input
          class="mono"
          value={cron}
          maxLength={256}
          required
          placeholder="0 2 * * *"
          onInput={(e) => setCron(e.currentTarget.value)}
        />
      </label>
      <label>
        Time zone
        <input value={timeZone} maxLength={64} onInput={(e) => setTimeZone(e.currentTarget.value)} />
      </label>
      <label>
        Starts
        <select value={kind} onChange={(e) => setKind(e.currentTarget.value as "workflow" | "job")}>
          <option value="workflow">an instance of the workflow</option>
          <option value="job">a job on the queue</option>
        </select>
      </label>
      <label>
        {kind === "workflow" ? "Workflow" : "Queue"}
        <input value={target} maxLength={64} required onInput={(e) => setTarget(e.currentTarget.value)} />
      </label>
      <label>
        While the previous one runs
        <select value={overlap} onChange={(e) => setOverlap(Number(e.currentTarget.value) as OverlapPolicy)}>
          <option value={OverlapPolicy.SKIP}>skip the fire</option>
          <option value={OverlapPolicy.ALLOW}>start another</option>
          <option value={OverlapPolicy.CANCEL_PREVIOUS}>cancel the previous, then start</option>
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Create schedule
      </button>
      <Outcome error={error} done={done} />
    </form>
  );
}

export function SchedulePage({ name }: { name: string }) {
  const { data, error, refresh } = usePoll(
    (signal) => api.schedules.getSchedule({ name, upcoming: UPCOMING }, { signal }),
    POLL_MS,
    [name],
  );
  const s = data?.schedule;
  const now = Date.now();
  return (
    <section>
      <p class="crumbs">
        <a href="#/schedules">Schedules</a> /
      </p>
      <h1>
        {name} {s?.paused && <span class="badge paused">paused</span>}
      </h1>
      <ErrorBanner error={error} />
      {!data && !error && <p>Loading…</p>}
      {s && (
        <>
          <dl class="details">
            <dt>Cron</dt>
            <dd class="mono">{s.cron}</dd>
            <dt>Time zone</dt>
            <dd>{s.timeZone || "UTC"}</dd>
            <dt>Starts</dt>
            <dd>
              <Target schedule={s} />
            </dd>
            <dt>Fires</dt>
            <dd>{count(s.fires)}</dd>
            <dt>Created</dt>
            <dd>{dateTime(s.createdAt)}</dd>
          </dl>
          <Allowed action="schedule.pause">
            <div class="toolbar">
              <PauseButton schedule={s} onDone={refresh} />
            </div>
          </Allowed>
          <h2>Next fire times</h2>
          {s.upcoming.length === 0 ? (
            <p>{s.paused ? "None while paused." : "The cron never fires again."}</p>
          ) : (
            <ol class="upcoming" aria-label="Next fire times">
              {s.upcoming.map((t) => {
                const at = timestampMs(t) ?? now;
                const zoned = zonedDateTime(at, s.timeZone || "UTC");
                return (
                  <li key={String(t.seconds)}>
                    {dateTime(at)} <span class="muted">(in {span(at - now)})</span>
                    {zoned && (
                      <span class="muted">
                        {" "}
                        · {zoned} {s.timeZone || "UTC"}
                      </span>
                    )}
                  </li>
                );
              })}
            </ol>
          )}
          <History schedule={s} />
        </>
      )}
    </section>
  );
}

function History({ schedule: s }: { schedule: Schedule }) {
  if (s.history.length === 0) return <p>It has not fired yet.</p>;
  return (
    <>
      <h2>Latest fires</h2>
      <table class="fires" aria-label="Latest fires">
        <Head columns={["Fire time", "Outcome", "Started", "Note", "Recorded"]} />
        <tbody>
          {[...s.history].reverse().map((f) => (
            <tr key={`${f.at?.seconds}-${f.firedAt?.seconds}`}>
              <td>
                {dateTime(f.at)}
                {f.through ? ` to ${dateTime(f.through)}` : ""}
              </td>
              <td>
                <Badge state={fireNames[f.outcome]} />
              </td>
              <td class="mono">
                <Started schedule={s} id={f.started} />
              </td>
              <td>{f.error || (f.previous ? `previous: ${f.previous}` : "")}</td>
              <td>{dateTime(f.firedAt)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

const fireNames: Record<FireOutcome, string> = {
  [FireOutcome.UNSPECIFIED]: "—",
  [FireOutcome.STARTED]: "started",
  [FireOutcome.SKIPPED]: "skipped",
  [FireOutcome.MISSED]: "missed",
  [FireOutcome.FAILED]: "failed",
};

function Target({ schedule: s }: { schedule: Schedule }) {
  const t = s.target;
  if (t.case === "workflow")
    return (
      <>
        workflow <a href={href("workflows", t.value.workflow)}>{t.value.workflow}</a>
      </>
    );
  if (t.case === "job")
    return (
      <>
        a job on <a href={href("queues", t.value.queue)}>{t.value.queue}</a>
        {t.value.body.length > 0 && <span class="muted"> ({bodyText(t.value.body.subarray(0, 60))})</span>}
      </>
    );
  return <>—</>;
}

/** What a fire started: an instance or a job, linked to its page. */
function Started({ schedule, id }: { schedule: Schedule; id: string }) {
  if (id === "") return <>—</>;
  return <a href={schedule.target.case === "job" ? href("jobs", id) : href("instances", id)}>{id}</a>;
}

function nextFire(s: Schedule, now: number): string {
  const next = timestampMs(s.nextFireAt);
  if (s.paused) return "— (paused)";
  if (next === undefined) return "never";
  return `${dateTime(next)} (in ${span(next - now)})`;
}

function PauseButton({ schedule, onDone }: { schedule: Schedule; onDone: () => void }) {
  const { busy, error, done, run } = useAction();
  const paused = schedule.paused;
  return (
    <>
      <button
        type="button"
        disabled={busy}
        aria-label={`${paused ? "Resume" : "Pause"} ${schedule.name}`}
        onClick={() =>
          void run(async () => {
            const name = schedule.name;
            await (paused ? api.schedules.resumeSchedule({ name }) : api.schedules.pauseSchedule({ name }));
            onDone();
            return paused ? `Resumed ${name}.` : `Paused ${name}.`;
          })
        }
      >
        {paused ? "Resume" : "Pause"}
      </button>
      <Outcome error={error} done={done} />
    </>
  );
}
