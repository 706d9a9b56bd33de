/**
 * The 5-job diamond (a → b, c, d → e) of issue 24's fault test and benchmark, and the
 * pieces both use: its definition, a WorkflowService client, instance starters and the
 * check of an ended instance's run history.
 *
 * Each job runs on a queue of its own (diamond_a … diamond_e): every edge then crosses
 * queues, as in a real workflow whose jobs need different workers, so each ACK's step
 * enqueues onto another queue (in a cluster, onto partitions another broker may own)
 * rather than back onto the queue it acked from.
 */
import { type Client, createClient } from "@connectrpc/connect";
import { openTransport } from "@runlater/sdk";
import { type Instance, InstanceState, RunOutcome, WorkflowService } from "@runlater/sdk/gen/workflow_service_pb.js";

export const JOBS = ["a", "b", "c", "d", "e"] as const;
export type DiamondJob = (typeof JOBS)[number];
/** Each job's upstream jobs: one input per upstream job. */
export const UPSTREAM: Record<DiamondJob, DiamondJob[]> = { a: [], b: ["a"], c: ["a"], d: ["a"], e: ["b", "c", "d"] };
/** Edges of one instance (a→b, a→c, a→d, b→e, c→e, d→e). */
export const EDGES = JOBS.flatMap((to) => UPSTREAM[to].map((from) => [from, to] as const));
export const queueOf = (job: DiamondJob) => `diamond_${job}`;
export const QUEUES = JOBS.map(queueOf);

export function diamondDefinition(name: string, attemptsAllowed = 0) {
  return {
    name,
    jobs: JOBS.map((job) => ({
      name: job,
      queue: queueOf(job),
      body: new TextEncoder().encode(job),
      attemptsAllowed,
      inputs: UPSTREAM[job].map((from) => ({ source: { case: "job" as const, value: from } })),
    })),
  };
}

export type WorkflowClient = Client<typeof WorkflowService> & { close(): void };

/** A WorkflowService client of its own (its own connection and deadline), over the SDK's transport. */
export function workflowClient(url: string, timeoutMs = 5_000): WorkflowClient {
  const { transport, close } = openTransport(url, { timeoutMs });
  return Object.assign(createClient(WorkflowService, transport), { close });
}

/**
 * What is wrong with an ended instance of the diamond, as lines (none: it is right): it
 * SUCCEEDED; each job ran exactly once and succeeded; each run was triggered by exactly one
 * event per upstream job, the event that upstream job's single run posted; no event is
 * left waiting in any input (an event posted twice would sit there, or run its job again).
 */
export function diamondViolations(instance: Instance | undefined, name: string): string[] {
  if (!instance) return [`${name}: not found`];
  const out: string[] = [];
  const id = instance.instanceId;
  if (instance.state !== InstanceState.SUCCEEDED) out.push(`${id}: ${InstanceState[instance.state]}`);
  for (const job of JOBS) {
    const j = instance.jobs.find((x) => x.name === job);
    if (!j) {
      out.push(`${id}/${job}: missing`);
      continue;
    }
    if (j.runCount !== 1 || j.runs.length !== 1) out.push(`${id}/${job}: ${j.runCount} runs`);
    if (j.pendingEvents.length > 0)
      out.push(`${id}/${job}: events left in its inputs from ${j.pendingEvents.map((e) => e.fromJob).join(",")}`);
    for (const run of j.runs) {
      if (run.outcome !== RunOutcome.SUCCEEDED) out.push(`${id}/${job} run ${run.run}: outcome ${run.outcome}`);
      const from = run.triggeredBy.map((e) => `${e.fromJob}#${e.fromRun}`).sort();
      const want = UPSTREAM[job].map((u) => `${u}#1`);
      if (from.join(",") !== want.join(","))
        out.push(`${id}/${job} run ${run.run}: triggered by [${from}], expected [${want}]`);
    }
  }
  return out;
}

/** Every instance of `workflow` (ListInstances, all pages), without their jobs. */
export async function listInstances(wf: Pick<WorkflowClient, "listInstances">, workflow: string): Promise<Instance[]> {
  const all: Instance[] = [];
  let pageToken = "";
  do {
    const page = await wf.listInstances({ workflow, limit: 1000, pageToken });
    all.push(...page.instances);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return all;
}

/** Runs `fn` over `items` with at most `parallel` calls at once; results in order. */
export async function mapLimit<T, R>(items: readonly T[], parallel: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(parallel, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await fn(items[i]!);
      }
    }),
  );
  return results;
}
