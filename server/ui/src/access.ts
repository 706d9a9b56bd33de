/**
 * What the person at the dashboard may do. Every button that changes something is
 * wrapped in <Allowed action=…> (components.tsx), so when tokens with scopes exist (the
 * security issue) only this function changes: it will answer from the scopes of the
 * signed-in token, and buttons a token may not use are not shown. The server refuses
 * such calls anyway; this only keeps the page honest.
 */
export type Action = "queue.create" | "queue.update" | "job.enqueue" | "jobs.retry" | "jobs.delete";

/** Scopes of the signed-in token; undefined while the server has no auth (everything allowed). */
export const grants: { scopes: ReadonlySet<string> | undefined } = { scopes: undefined };

export function can(action: Action): boolean {
  return grants.scopes === undefined || grants.scopes.has(action);
}
