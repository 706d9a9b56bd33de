/**
 * The reconciler's decision (docs/workflows.md#the-reconciler): a run is still queued in its
 * instance, but its queue job ended FAILED without the ACK path (the claim-timeout sweep
 * used its last attempt) or is gone (deleted by a user, or by its queue's retention). Such
 * a run can never end otherwise: it ends failed now, under its job's failure policy. Pure,
 * and idempotent by construction: a run's outcome is taken once (runEnded changes nothing
 * for a run that is no longer queued).
 */
import { limits } from "./limits.js";
import type { WorkflowDef } from "./workflow-definition.js";
import { type AssignId, runEnded, type Transition, type WorkflowInstance } from "./workflow-transitions.js";

/** A queued run's queue job as read from the store: failed (with its last custom status), gone, or neither. */
export type QueueJobSeen = { state: "failed"; customStatus: string } | { state: "gone" } | { state: "live" };

/** The queue job ids of the instance's queued runs (what the reconciler reads). */
export function queuedRunJobs(instance: WorkflowInstance): string[] {
  if (instance.state !== "running") return [];
  return Object.values(instance.jobs).flatMap((job) =>
    job.runs.filter((r) => r.outcome === "queued").map((r) => r.queueJobId),
  );
}

/** Ends, as failed, every queued run whose queue job `seen` says failed or gone. */
export function queuedRunsEnded(
  def: WorkflowDef,
  instance: WorkflowInstance,
  seen: ReadonlyMap<string, QueueJobSeen>,
  now: number,
  assignId: AssignId,
): Transition {
  let t: Transition = { instance, enqueue: [], cancel: [], changed: false };
  for (const [name, job] of Object.entries(instance.jobs)) {
    for (const run of job.runs) {
      const found = seen.get(run.queueJobId);
      if (run.outcome !== "queued" || !found || found.state === "live") continue;
      const customStatus =
        found.state === "failed"
          ? found.customStatus
          : `its queue job ${run.queueJobId} is gone (deleted, or removed by retention)`;
      const next = runEnded(
        def,
        t.instance,
        {
          job: name,
          run: run.run,
          outcome: "failed",
          output: { customStatus: customStatus.slice(0, limits.customStatusMaxLength), result: new Uint8Array() },
          postEvents: false,
          now,
        },
        assignId,
      );
      if (!next.changed) continue;
      t = {
        instance: next.instance,
        enqueue: [...t.enqueue, ...next.enqueue],
        cancel: [...t.cancel, ...next.cancel],
        changed: true,
      };
    }
  }
  return t;
}
