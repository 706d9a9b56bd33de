/**
 * What the person at the dashboard may do: the single place that decides which buttons
 * show. Every button that changes something is wrapped in <Allowed action=…> (components.tsx).
 * With auth on, the answer comes from the signed-in token as TokenService.WhoAmI described
 * it: its scopes and queue patterns, checked as the server checks them
 * (server/src/auth/access.ts has the server's table). The server refuses such calls anyway;
 * this only keeps the page honest.
 */
export type Action =
  | "queue.create"
  | "queue.update"
  | "job.enqueue"
  | "jobs.retry"
  | "jobs.delete"
  | "workflow.cancel"
  | "workflow.close"
  | "workflow.post-event"
  | "workflow.rerun"
  | "workflow.toggle-job"
  | "schedule.pause"
  | "schedule.create";

/** The scope each action's call needs, and whether it names queues ("named") or spans them ("all"). */
const NEEDS: Record<Action, { scope: string; queues: "named" | "all" }> = {
  "queue.create": { scope: "admin", queues: "named" },
  "queue.update": { scope: "admin", queues: "named" },
  "job.enqueue": { scope: "enqueue", queues: "named" },
  "jobs.retry": { scope: "admin", queues: "named" },
  "jobs.delete": { scope: "admin", queues: "named" },
  // Workflow and schedule calls span queues: only a token without queue patterns may.
  "workflow.cancel": { scope: "admin", queues: "all" },
  "workflow.close": { scope: "admin", queues: "all" },
  "workflow.post-event": { scope: "enqueue", queues: "all" },
  "workflow.rerun": { scope: "admin", queues: "all" },
  "workflow.toggle-job": { scope: "admin", queues: "all" },
  "schedule.pause": { scope: "admin", queues: "all" },
  "schedule.create": { scope: "admin", queues: "all" },
};

export interface Grants {
  scopes: ReadonlySet<string>;
  /** Queue name patterns (`*`: any run of name characters); empty: every queue. */
  queues: readonly string[];
}

/** The signed-in token's grants; undefined while the server has no auth (everything allowed). */
export const grants: { current: Grants | undefined } = { current: undefined };

/** Whether the session may do `action`, on `queue` when the action is about one (unknown yet: any queue it may touch). */
export function can(action: Action, queue?: string): boolean {
  const g = grants.current;
  if (g === undefined) return true;
  const need = NEEDS[action];
  if (!g.scopes.has(need.scope)) return false;
  if (g.queues.length === 0) return true;
  if (need.queues === "all") return false;
  return queue === undefined || g.queues.some((pattern) => patternMatches(pattern, queue));
}

/** Patterns hold letters, digits, _ and *, as do queue names, so a regular expression is safe. */
function patternMatches(pattern: string, queue: string): boolean {
  return new RegExp(`^${pattern.replaceAll("*", "[A-Za-z0-9_]*")}$`).test(queue);
}
