/** Names for workflow states as the pages show them (and as CSS classes: `state-<name>`). */
import {
  type InstanceJob,
  InstanceJobState,
  InstanceState,
  RunOutcome,
} from "@runlater/sdk/gen/workflow_service_pb.js";

export const instanceStateNames: Record<InstanceState, string> = {
  [InstanceState.UNSPECIFIED]: "any",
  [InstanceState.RUNNING]: "running",
  [InstanceState.SUCCEEDED]: "succeeded",
  [InstanceState.FAILED]: "failed",
  [InstanceState.ABORTED]: "aborted",
  [InstanceState.CANCELLED]: "cancelled",
};

export const outcomeNames: Record<RunOutcome, string> = {
  [RunOutcome.UNSPECIFIED]: "—",
  [RunOutcome.QUEUED]: "queued",
  [RunOutcome.SUCCEEDED]: "succeeded",
  [RunOutcome.FAILED]: "failed",
  [RunOutcome.ABANDONED]: "abandoned",
};

/**
 * How a job of an instance looks in the graph: its state, except that a waiting job that
 * has run shows how its last run ended (succeeded, failed, abandoned), which is what a
 * person scans a graph for.
 */
export function jobLook(job: InstanceJob): string {
  switch (job.state) {
    case InstanceJobState.RUNNABLE:
      return "runnable";
    case InstanceJobState.RUNNING:
      return "running";
    case InstanceJobState.DISABLED:
      return "disabled";
    case InstanceJobState.WAITING:
    case InstanceJobState.UNSPECIFIED: {
      const last = job.runs.at(-1);
      return last && last.outcome !== RunOutcome.QUEUED ? outcomeNames[last.outcome] : "waiting";
    }
  }
}
