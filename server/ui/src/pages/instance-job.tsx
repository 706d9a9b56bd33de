/**
 * One job of a workflow instance: its state, the events waiting in its inputs, and its run
 * history (each run's queue job, triggering events, outcome and output), with the buttons
 * to disable or enable the job and to re-run a run.
 */
import {
  type InstanceJob,
  InstanceJobState,
  type JobRun,
  type WorkflowEvent,
} from "@runlater/sdk/gen/workflow_service_pb.js";
import { useAction } from "../action.js";
import { api } from "../api.js";
import { Allowed, Badge, Head, Outcome } from "../components.js";
import { bodyText, count, dateTime, plural } from "../format.js";
import { href } from "../router.js";
import { jobLook, outcomeNames } from "../workflow-states.js";

export interface InstanceJobDetailProps {
  instanceId: string;
  job: InstanceJob;
  /** The queue its runs go to, from the definition. */
  queue: string | undefined;
  /** The instance still runs: only then can its jobs change. */
  running: boolean;
  onChanged: () => void;
}

export function InstanceJobDetail({ instanceId, job, queue, running, onChanged }: InstanceJobDetailProps) {
  const { busy, error, done, run } = useAction();
  const disabled = job.state === InstanceJobState.DISABLED;
  const toggle = () =>
    void run(async () => {
      const target = { instanceId, job: job.name };
      await (disabled ? api.workflows.enableJob(target) : api.workflows.disableJob(target));
      onChanged();
      return disabled ? `Enabled ${job.name}.` : `Disabled ${job.name}.`;
    });
  const rerun = (r: JobRun) =>
    void run(async () => {
      await api.workflows.rerunJob({ instanceId, job: job.name, run: r.run });
      onChanged();
      return `Posted the events of run ${r.run} of ${job.name} again.`;
    });
  // Runs are kept oldest first; the newest is what a person looks for.
  const runs = [...job.runs].reverse();
  return (
    <article class="instance-job" aria-label={`Job ${job.name}`}>
      <h2>
        Job {job.name} <Badge state={jobLook(job)} />
      </h2>
      <p>
        {queue && (
          <>
            Runs on queue <a href={href("queues", queue)}>{queue}</a>.{" "}
          </>
        )}
        {plural(job.runCount, "run")} in all
        {job.runCount > job.runs.length ? ` (the latest ${job.runs.length} are kept)` : ""}.
        {job.droppedEvents > 0 ? ` ${count(job.droppedEvents)} events were dropped (an input was full).` : ""}
      </p>
      {running && (
        <Allowed action="workflow.toggle-job">
          <div class="toolbar">
            <button type="button" disabled={busy} onClick={toggle}>
              {disabled ? "Enable job" : "Disable job"}
            </button>
          </div>
        </Allowed>
      )}
      <Outcome error={error} done={done} />
      {job.pendingEvents.length > 0 && (
        <>
          <h3>Events waiting in its inputs</h3>
          <ul class="events">
            {job.pendingEvents.map((e) => (
              <li key={e.eventId}>
                <EventLine event={e} />
              </li>
            ))}
          </ul>
        </>
      )}
      <h3>Runs</h3>
      {runs.length === 0 ? (
        <p>No runs yet.</p>
      ) : (
        <table class="runs" aria-label={`Runs of ${job.name}`}>
          <Head columns={["#Run", "Queue job", "Outcome", "Triggered by", "Output", "Queued", "Ended", ""]} />
          <tbody>
            {runs.map((r) => (
              <tr key={r.run} data-run={r.run}>
                <td class="num">{r.run}</td>
                <td class="mono">{r.jobId ? <a href={href("jobs", r.jobId)}>{r.jobId}</a> : "—"}</td>
                <td>
                  <Badge state={outcomeNames[r.outcome]} />
                </td>
                <td>
                  {r.triggeredBy.length === 0
                    ? "the start"
                    : r.triggeredBy.map((e) => (
                        <div key={e.eventId}>
                          <EventLine event={e} />
                        </div>
                      ))}
                  {r.trimmed && (
                    <div class="muted" title="dropped to keep the instance within its size bound">
                      results trimmed
                    </div>
                  )}
                </td>
                <td class="status">{output(r.customStatus, r.result)}</td>
                <td>{dateTime(r.queuedAt)}</td>
                <td>{dateTime(r.endedAt)}</td>
                <td>
                  {running && !r.trimmed && (
                    <Allowed action="workflow.rerun">
                      <button type="button" disabled={busy} onClick={() => rerun(r)}>
                        Re-run
                      </button>
                    </Allowed>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

/** Where an event came from, and what it carries. */
function EventLine({ event: e }: { event: WorkflowEvent }) {
  const from = e.fromJob ? `${e.fromJob} run ${e.fromRun}` : e.input.startsWith("external:") ? e.input : "seed";
  const carried = output(e.customStatus, e.result);
  return (
    <span class="event">
      {from}
      {carried !== "" && <span class="muted"> · {carried}</span>}
    </span>
  );
}

function output(customStatus: string, result: Uint8Array): string {
  const text = result.length > 0 ? bodyText(result.subarray(0, 200)) : "";
  return [customStatus, text].filter((s) => s !== "").join(" · ");
}
