/**
 * A workflow's graph laid out in layers, left to right, for the instance page's SVG
 * (graph-view.tsx). Workflows hold at most 100 jobs, so a small layered layout is
 * enough: edges that close a cycle (workflows may loop) are found by a depth-first walk
 * and set aside; every other node goes one layer right of its furthest input; nodes of a
 * layer are ordered by where their inputs sit, so edges cross less.
 */
import type { Workflow } from "@runlater/sdk/gen/workflow_service_pb.js";

export interface GraphNode {
  /** A job's name, or "external:<input>" for an external input. */
  id: string;
  label: string;
  kind: "job" | "external";
  x: number;
  y: number;
}

export interface GraphEdge {
  from: string;
  to: string;
  /** It closes a cycle: drawn back, below the nodes. */
  back: boolean;
  /** A seed input: it holds one event when an instance starts. */
  seed: boolean;
}

export interface Layout {
  nodes: GraphNode[];
  edges: GraphEdge[];
  width: number;
  height: number;
}

export const NODE_W = 176;
export const NODE_H = 52;
const GAP_X = 64;
const GAP_Y = 22;
/** Room under the nodes for edges drawn back. */
const BACK_ROOM = 36;

export const externalId = (input: string) => `external:${input}`;

export function layoutWorkflow(workflow: Pick<Workflow, "jobs">): Layout {
  const nodes: Array<Omit<GraphNode, "x" | "y">> = [];
  const edges: GraphEdge[] = [];
  const known = new Set<string>();
  const add = (id: string, label: string, kind: GraphNode["kind"]) => {
    if (known.has(id)) return;
    known.add(id);
    nodes.push({ id, label, kind });
  };
  for (const job of workflow.jobs) {
    for (const input of job.inputs) {
      if (input.source.case === "external") add(externalId(input.source.value), input.source.value, "external");
    }
    add(job.name, job.name, "job");
  }
  for (const job of workflow.jobs) {
    for (const input of job.inputs) {
      const from = input.source.case === "external" ? externalId(input.source.value) : input.source.value;
      if (from !== undefined && known.has(from)) edges.push({ from, to: job.name, back: false, seed: input.seed });
    }
  }
  markBackEdges(
    nodes.map((n) => n.id),
    edges,
  );
  const layer = layers(
    nodes.map((n) => n.id),
    edges,
  );
  const columns: string[][] = [];
  for (const n of nodes) (columns[layer.get(n.id)!] ??= []).push(n.id);
  const row = new Map<string, number>();
  for (const column of columns) {
    // Barycentre of each node's inputs in the columns already placed; definition order breaks ties.
    const weight = (id: string) => {
      const from = edges.filter((e) => e.to === id && !e.back && row.has(e.from)).map((e) => row.get(e.from)!);
      return from.length === 0 ? Number.POSITIVE_INFINITY : from.reduce((a, b) => a + b, 0) / from.length;
    };
    const order = column.map((id, i) => ({ id, i, w: weight(id) })).sort((a, b) => a.w - b.w || a.i - b.i);
    for (const [i, o] of order.entries()) row.set(o.id, i);
  }
  const tallest = Math.max(1, ...columns.map((c) => c.length));
  const placed = nodes.map((n) => ({
    ...n,
    x: layer.get(n.id)! * (NODE_W + GAP_X),
    y: row.get(n.id)! * (NODE_H + GAP_Y),
  }));
  return {
    nodes: placed,
    edges,
    width: Math.max(1, columns.length) * (NODE_W + GAP_X) - GAP_X,
    height: tallest * (NODE_H + GAP_Y) - GAP_Y + (edges.some((e) => e.back) ? BACK_ROOM : 0),
  };
}

/** Marks the edges that reach a node still on the depth-first path: removing them leaves no cycle. */
function markBackEdges(ids: string[], edges: GraphEdge[]): void {
  const state = new Map<string, "open" | "done">();
  const out = (id: string) => edges.filter((e) => e.from === id);
  const visit = (id: string) => {
    state.set(id, "open");
    for (const e of out(id)) {
      const s = state.get(e.to);
      if (s === "open") e.back = true;
      else if (s === undefined) visit(e.to);
    }
    state.set(id, "done");
  };
  // Start from nodes nothing feeds (the natural beginnings), then whatever a cycle left over.
  const fed = new Set(edges.map((e) => e.to));
  for (const id of ids.filter((i) => !fed.has(i))) if (!state.has(id)) visit(id);
  for (const id of ids) if (!state.has(id)) visit(id);
}

/** Each node's layer: one more than its furthest input's, over the edges that are not back edges. */
function layers(ids: string[], edges: GraphEdge[]): Map<string, number> {
  const forward = edges.filter((e) => !e.back);
  const waiting = new Map(ids.map((id) => [id, forward.filter((e) => e.to === id).length]));
  const layer = new Map(ids.map((id) => [id, 0]));
  const ready = ids.filter((id) => waiting.get(id) === 0);
  while (ready.length > 0) {
    const id = ready.shift()!;
    for (const e of forward.filter((f) => f.from === id)) {
      layer.set(e.to, Math.max(layer.get(e.to)!, layer.get(id)! + 1));
      waiting.set(e.to, waiting.get(e.to)! - 1);
      if (waiting.get(e.to) === 0) ready.push(e.to);
    }
  }
  return layer;
}

/** An edge's SVG path: a curve from the right of `from` to the left of `to`, or a loop back underneath. */
export function edgePath(from: GraphNode, to: GraphNode, back: boolean, bottom: number): string {
  if (!back) {
    const x1 = from.x + NODE_W;
    const y1 = from.y + NODE_H / 2;
    const x2 = to.x;
    const y2 = to.y + NODE_H / 2;
    const bend = Math.max(24, (x2 - x1) / 2);
    return `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
  }
  // Leave from the right half and arrive at the left half, so a job that feeds itself shows a loop.
  const x1 = from.x + NODE_W * 0.65;
  const y1 = from.y + NODE_H;
  const x2 = to.x + NODE_W * 0.35;
  const y2 = to.y + NODE_H;
  return `M${x1},${y1} C${x1},${bottom} ${x2},${bottom} ${x2},${y2}`;
}
