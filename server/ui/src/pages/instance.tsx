/**
 * One workflow instance (GetInstance every POLL_MS, its version's definition once): the
 * graph of its jobs coloured by state, each job's runs (instance-job.tsx), and the
 * buttons: cancel the instance, close one started keep-open, post to an external input,
 * and per job disable/enable and re-run.
 */
import { type Instance, InstanceState, type Workflow } from "@runlater/sdk/gen/workflow_service_pb.js";
import type { ComponentChildren } from "preact";
import { useRef, useState } from "preact/hooks";
import { useAction } from "../action.js";
import { api } from "../api.js";
import { Allowed, Badge, Confirm, ErrorBanner, Head, Outcome } from "../components.js";
import { count, dateTime, plural } from "../format.js";
import { GraphView } from "../graph-view.js";
import { usePoll } from "../poll.js";
import { href } from "../router.js";
import { instanceStateNames, jobLook } from "../workflow-states.js";
import { InstanceJobDetail } from "./instance-job.js";
import { POLL_MS } from "./workflows.js";

export function InstancePage({ id }: { id: string }) {
  // A version's definition never changes: read it once per instance page.
  const definitions = useRef(new Map<string, Workflow>());
  const { data, error, refresh } = usePoll(
    async (signal) => {
      const { instance } = await api.workflows.getInstance({ instanceId: id }, { signal });
      if (!instance) throw new Error("the server answered without the instance");
      const key = `${instance.workflow}@${instance.version}`;
      let workflow = definitions.current.get(key);
      if (!workflow) {
        workflow = (await api.workflows.getWorkflow({ name: instance.workflow, version: instance.version }, { signal }))
          .workflow;
        if (workflow) definitions.current.set(key, workflow);
      }
      return { instance, workflow };
    },
    POLL_MS,
    [id],
  );
  const [selected, setSelected] = useState<string | undefined>();
  const instance = data?.instance;
  const job = instance?.jobs.find((j) => j.name === selected) ?? instance?.jobs[0];
  const running = instance?.state === InstanceState.RUNNING;
  return (
    <section>
      <p class="crumbs">
        <a href="#/workflows">Workflows</a> /{" "}
        {instance && (
          <>
            <a href={href("workflows", instance.workflow)}>{instance.workflow}</a> /
          </>
        )}
      </p>
      <h1>
        <span class="mono">{id}</span> {instance && <Badge state={instanceStateNames[instance.state]} />}
      </h1>
      <ErrorBanner error={error} />
      {!data && !error && <p>Loading…</p>}
      {instance && (
        <>
          <Summary instance={instance} />
          {running && (
            <Allowed action="workflow.cancel">
              <InstanceAction
                label="Cancel instance…"
                title="Cancel this instance?"
                confirmLabel="Cancel instance"
                danger
                call={() => api.workflows.cancelInstance({ instanceId: id })}
                doneText="Instance cancelled."
                onDone={refresh}
              >
                <p>
                  Its pending queue jobs are deleted; running ones finish, but their outcomes post nothing. This cannot
                  be undone.
                </p>
              </InstanceAction>
            </Allowed>
          )}
          {running && instance.keepOpen && (
            <Allowed action="workflow.close">
              <InstanceAction
                label="Close instance…"
                title="Close this instance?"
                confirmLabel="Close instance"
                call={() => api.workflows.closeInstance({ instanceId: id })}
                doneText="Instance closed: it ends once nothing is runnable or running."
                onDone={refresh}
              >
                <p>
                  It was started to stay open for external inputs. Closed, it ends once no job is runnable or running
                  (at once, if none is). This cannot be undone.
                </p>
              </InstanceAction>
            </Allowed>
          )}
          {data.workflow && (
            <GraphView
              workflow={data.workflow}
              looks={new Map(instance.jobs.map((j) => [j.name, jobLook(j)]))}
              notes={new Map(instance.jobs.map((j) => [j.name, j.runCount > 0 ? plural(j.runCount, "run") : ""]))}
              selected={job?.name}
              onSelect={setSelected}
            />
          )}
          <JobsTable instance={instance} selected={job?.name} onSelect={setSelected} />
          {job && (
            <InstanceJobDetail
              key={job.name}
              instanceId={id}
              job={job}
              queue={data.workflow?.jobs.find((j) => j.name === job.name)?.queue}
              running={running}
              onChanged={refresh}
            />
          )}
          {running && data.workflow && (
            <Allowed action="workflow.post-event">
              <PostEvent id={id} workflow={data.workflow} onDone={refresh} />
            </Allowed>
          )}
        </>
      )}
    </section>
  );
}

function Summary({ instance }: { instance: Instance }) {
  return (
    <dl class="details">
      <dt>Workflow</dt>
      <dd>
        <a href={href("workflows", instance.workflow)}>{instance.workflow}</a> version {instance.version}
      </dd>
      <dt>Started</dt>
      <dd>{dateTime(instance.createdAt)}</dd>
      <dt>Ended</dt>
      <dd>{instance.endedAt ? dateTime(instance.endedAt) : instance.keepOpen ? "kept open (until closed)" : "—"}</dd>
    </dl>
  );
}

function JobsTable(p: { instance: Instance; selected: string | undefined; onSelect: (job: string) => void }) {
  return (
    <table class="instance-jobs" aria-label="Jobs">
      <Head columns={["Job", "State", "#Runs", "#Events waiting", "#Events dropped"]} />
      <tbody>
        {p.instance.jobs.map((j) => (
          <tr key={j.name} data-job={j.name} aria-selected={p.selected === j.name}>
            <th scope="row">
              <button type="button" class="link" onClick={() => p.onSelect(j.name)}>
                {j.name}
              </button>
            </th>
            <td>
              <Badge state={jobLook(j)} />
            </td>
            <td class="num">{count(j.runCount)}</td>
            <td class="num">{count(j.pendingEvents.length)}</td>
            <td class="num">{count(j.droppedEvents)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A button that asks before it calls: cancel or close the instance. */
function InstanceAction(p: {
  label: string;
  title: string;
  confirmLabel: string;
  danger?: boolean;
  call: () => Promise<unknown>;
  doneText: string;
  onDone: () => void;
  children: ComponentChildren;
}) {
  const [asking, setAsking] = useState(false);
  const { busy, error, done, run } = useAction();
  return (
    <div class="toolbar">
      <button type="button" class={p.danger ? "danger" : undefined} onClick={() => setAsking(true)}>
        {p.label}
      </button>
      <Outcome error={error} done={done} />
      {asking && (
        <Confirm
          title={p.title}
          confirmLabel={p.confirmLabel}
          busy={busy}
          onCancel={() => setAsking(false)}
          onConfirm={() =>
            void run(async () => {
              await p.call();
              setAsking(false);
              p.onDone();
              return p.doneText;
            })
          }
        >
          {p.children}
        </Confirm>
      )}
    </div>
  );
}

function PostEvent({ id, workflow, onDone }: { id: string; workflow: Workflow; onDone: () => void }) {
  const inputs = [
    ...new Set(
      workflow.jobs.flatMap((j) => j.inputs.flatMap((i) => (i.source.case === "external" ? [i.source.value] : []))),
    ),
  ];
  const [input, setInput] = useState(inputs[0] ?? "");
  const [status, setStatus] = useState("");
  const [result, setResult] = useState("");
  const { busy, error, done, run } = useAction();
  if (inputs.length === 0) return null;
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await api.workflows.postEvent({
        instanceId: id,
        event: { input, customStatus: status, result: new TextEncoder().encode(result) },
      });
      onDone();
      return `Posted an event to ${input}.`;
    });
  };
  return (
    <form class="inline" onSubmit={submit} aria-label="Post an event">
      <h2>Post an event to an external input</h2>
      <label>
        Input
        <select value={input} onChange={(e) => setInput(e.currentTarget.value)}>
          {inputs.map((i) => (
            <option key={i} value={i}>
              {i}
            </option>
          ))}
        </select>
      </label>
      <label>
        Custom status
        <input value={status} maxLength={256} onInput={(e) => setStatus(e.currentTarget.value)} />
      </label>
      <label>
        Result (text)
        <input value={result} onInput={(e) => setResult(e.currentTarget.value)} />
      </label>
      <button type="submit" disabled={busy}>
        Post event
      </button>
      <Outcome error={error} done={done} />
    </form>
  );
}
