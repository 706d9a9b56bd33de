/**
 * A workflow's graph as inline SVG (layout in graph.ts): a box per job, coloured by its
 * state in the instance (the `state-*` classes the badges use), a pill per external input,
 * an arrow per input. A job's box is a button that selects the job.
 */
import type { Workflow } from "@runlater/sdk/gen/workflow_service_pb.js";
import { useMemo } from "preact/hooks";
import { edgePath, type GraphNode, layoutWorkflow, NODE_H, NODE_W } from "./graph.js";

export interface GraphViewProps {
  workflow: Pick<Workflow, "name" | "jobs">;
  /** Each job's look (jobLook); unset for a definition without an instance. */
  looks?: ReadonlyMap<string, string>;
  /** A second line under each job's name. */
  notes?: ReadonlyMap<string, string>;
  selected?: string;
  onSelect?: (job: string) => void;
}

const PAD = 8;

export function GraphView({ workflow, looks, notes, selected, onSelect }: GraphViewProps) {
  const layout = useMemo(() => layoutWorkflow(workflow), [workflow]);
  const byId = new Map(layout.nodes.map((n) => [n.id, n]));
  const bottom = layout.height - 6;
  return (
    <figure class="scroll" aria-label={`Graph of ${workflow.name}`}>
      <svg
        class="graph"
        width={layout.width + 2 * PAD}
        height={layout.height + 2 * PAD}
        viewBox={`${-PAD} ${-PAD} ${layout.width + 2 * PAD} ${layout.height + 2 * PAD}`}
      >
        <title>Graph of {workflow.name}</title>
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto">
            <path d="M0,0 L10,5 L0,10 z" />
          </marker>
        </defs>
        {layout.edges.map((e, i) => (
          <path
            key={i}
            class={`edge${e.back ? " back" : ""}${e.seed ? " seed" : ""}`}
            d={edgePath(byId.get(e.from)!, byId.get(e.to)!, e.back, bottom)}
            marker-end="url(#arrow)"
          />
        ))}
        {layout.nodes.map((n) =>
          n.kind === "external" ? (
            <External key={n.id} node={n} />
          ) : (
            <Job
              key={n.id}
              node={n}
              look={looks?.get(n.id)}
              note={notes?.get(n.id)}
              selected={selected === n.id}
              onSelect={onSelect}
            />
          ),
        )}
      </svg>
    </figure>
  );
}

function External({ node }: { node: GraphNode }) {
  return (
    <g class="node external" transform={`translate(${node.x},${node.y})`}>
      <rect width={NODE_W} height={NODE_H} rx={NODE_H / 2} />
      <text x={NODE_W / 2} y={NODE_H / 2 - 4} text-anchor="middle" class="kind">
        external input
      </text>
      <text x={NODE_W / 2} y={NODE_H / 2 + 13} text-anchor="middle">
        {clip(node.label)}
      </text>
    </g>
  );
}

function Job(p: {
  node: GraphNode;
  look: string | undefined;
  note: string | undefined;
  selected: boolean;
  onSelect: ((job: string) => void) | undefined;
}) {
  const { node, look, onSelect } = p;
  const box = (
    <>
      <title>{node.label}</title>
      <rect width={NODE_W} height={NODE_H} rx={6} />
      <text x={10} y={20} class="name">
        {clip(node.label)}
      </text>
      <text x={10} y={39} class="look">
        {[look, p.note].filter(Boolean).join(" · ")}
      </text>
    </>
  );
  const common = {
    class: `node job${look ? ` state-${look}` : ""}${p.selected ? " selected" : ""}`,
    "data-job": node.id,
    "data-look": look,
    transform: `translate(${node.x},${node.y})`,
  };
  if (!onSelect) return <g {...common}>{box}</g>;
  return (
    // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>; role, tabindex and keys make it one.
    <g
      {...common}
      role="button"
      tabIndex={0}
      aria-label={`${node.label}${look ? `: ${look}` : ""}`}
      aria-pressed={p.selected}
      onClick={() => onSelect(node.id)}
      onKeyDown={(e) => {
        if (e.key !== "Enter" && e.key !== " ") return;
        e.preventDefault();
        onSelect(node.id);
      }}
    >
      {box}
    </g>
  );
}

/** Names are up to 64 characters; a box holds about 22. */
function clip(s: string): string {
  return s.length > 22 ? `${s.slice(0, 21)}…` : s;
}
