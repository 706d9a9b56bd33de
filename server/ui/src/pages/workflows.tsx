/**
 * Workflows: every definition's latest version (ListWorkflows), and the instances, newest
 * first (ListInstances), filtered by workflow and state, a page at a time; read every
 * POLL_MS. With a workflow chosen (#/workflows/NAME) its definition's graph shows too.
 */
import { InstanceState, type Workflow } from "@runlater/sdk/gen/workflow_service_pb.js";
import { useState } from "preact/hooks";
import { api } from "../api.js";
import { Badge, ErrorBanner, Head, Pager } from "../components.js";
import { dateTime, span, timestampMs } from "../format.js";
import { GraphView } from "../graph-view.js";
import { usePoll } from "../poll.js";
import { href } from "../router.js";
import { instanceStateNames } from "../workflow-states.js";

export const POLL_MS = 1_500;
const PAGE_SIZE = 25;

export function WorkflowsPage({ workflow }: { workflow: string }) {
  const definitions = usePoll((signal) => api.workflows.listWorkflows({}, { signal }), POLL_MS, []);
  const chosen = definitions.data?.workflows.find((w) => w.name === workflow);
  return (
    <section>
      {workflow !== "" && (
        <p class="crumbs">
          <a href="#/workflows">Workflows</a> /
        </p>
      )}
      <h1>{workflow === "" ? "Workflows" : workflow}</h1>
      <ErrorBanner error={definitions.error} />
      {!definitions.data && !definitions.error && <p>Loading…</p>}
      {workflow === "" && definitions.data && <Definitions workflows={definitions.data.workflows} />}
      {chosen && (
        <>
          <p>
            Version {chosen.version}, applied {dateTime(chosen.createdAt)}: {chosen.jobs.length} jobs.
          </p>
          <GraphView workflow={chosen} notes={new Map(chosen.jobs.map((j) => [j.name, `on ${j.queue}`]))} />
        </>
      )}
      {definitions.data && workflow !== "" && !chosen && (
        <p role="status">No workflow is named {workflow}; its instances are listed if there are any.</p>
      )}
      <Instances key={workflow} workflow={workflow} names={definitions.data?.workflows.map((w) => w.name) ?? []} />
    </section>
  );
}

function Definitions({ workflows }: { workflows: Workflow[] }) {
  if (workflows.length === 0)
    return (
      <p>
        No workflows yet: define one with <code>runlater workflow apply FILE</code> or WorkflowService.ApplyWorkflow.
      </p>
    );
  return (
    <table class="workflows" aria-label="Workflows">
      <Head columns={["Workflow", "#Version", "Jobs", "Applied"]} />
      <tbody>
        {workflows.map((w) => (
          <tr key={w.name} data-workflow={w.name}>
            <th scope="row">
              <a href={href("workflows", w.name)}>{w.name}</a>
            </th>
            <td class="num">{w.version}</td>
            <td>
              {w.jobs.length}: {w.jobs.map((j) => j.name).join(", ")}
            </td>
            <td>{dateTime(w.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

const FILTER_STATES = [
  InstanceState.UNSPECIFIED,
  InstanceState.RUNNING,
  InstanceState.SUCCEEDED,
  InstanceState.FAILED,
  InstanceState.ABORTED,
  InstanceState.CANCELLED,
];

function Instances({ workflow, names }: { workflow: string; names: string[] }) {
  const [state, setState] = useState(InstanceState.UNSPECIFIED);
  /** Page tokens of the pages shown so far: the last is the current page's. */
  const [trail, setTrail] = useState<string[]>([""]);
  const pageToken = trail.at(-1)!;
  const page = usePoll(
    (signal) => api.workflows.listInstances({ workflow, state, limit: PAGE_SIZE, pageToken }, { signal }),
    POLL_MS,
    [workflow, state, pageToken],
  );
  const now = Date.now();
  return (
    <>
      <h2>Instances</h2>
      <form class="filters" aria-label="Instance filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Workflow
          <select
            value={workflow}
            onChange={(e) =>
              (location.hash = e.currentTarget.value === "" ? "#/workflows" : href("workflows", e.currentTarget.value))
            }
          >
            <option value="">every workflow</option>
            {names.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label>
          State
          <select
            value={String(state)}
            onChange={(e) => {
              setState(Number(e.currentTarget.value) as InstanceState);
              setTrail([""]);
            }}
          >
            {FILTER_STATES.map((s) => (
              <option key={s} value={String(s)}>
                {instanceStateNames[s]}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorBanner error={page.error} />
      {page.data && page.data.instances.length === 0 && <p>No instances match.</p>}
      {page.data && page.data.instances.length > 0 && (
        <table class="instances" aria-label="Instances">
          <Head columns={["Instance", "Workflow", "#Version", "State", "Started", "#Took"]} />
          <tbody>
            {page.data.instances.map((i) => {
              const started = timestampMs(i.createdAt) ?? now;
              return (
                <tr key={i.instanceId} data-instance={i.instanceId}>
                  <td class="mono">
                    <a href={href("instances", i.instanceId)}>{i.instanceId}</a>
                  </td>
                  <td>
                    <a href={href("workflows", i.workflow)}>{i.workflow}</a>
                  </td>
                  <td class="num">{i.version}</td>
                  <td>
                    <Badge state={instanceStateNames[i.state]} />
                    {i.keepOpen && <span class="badge"> kept open</span>}
                  </td>
                  <td>{dateTime(i.createdAt)}</td>
                  <td class="num">{span((timestampMs(i.endedAt) ?? now) - started)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      <Pager
        page={trail.length}
        hasNext={!!page.data?.nextPageToken}
        onPrevious={() => setTrail(trail.slice(0, -1))}
        onNext={() => page.data?.nextPageToken && setTrail([...trail, page.data.nextPageToken])}
      />
    </>
  );
}
