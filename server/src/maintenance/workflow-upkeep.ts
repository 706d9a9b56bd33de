/**
 * The upkeep of workflows (docs/workflows.md#the-reconciler), run by the maintenance
 * leader:
 * - after each claim-timeout sweep, the runs whose queue job the sweep failed for good
 *   (its last attempt's claim expired: no ACK, so no workflow step) end failed at once;
 * - a periodic pass, bounded per pass, over running instances finds queued runs whose
 *   queue job is FAILED or gone (a crash between the sweep and the step above, a job
 *   deleted by a user or by retention) and ends them the same way;
 * - retention deletes instances that ended longer ago than the instance retention.
 * Every step is idempotent: a run's outcome is taken once, under the instance's revision.
 */
import type { Logger } from "pino";
import type { Clock } from "../domain/clock.js";
import type { JobRecord } from "../domain/job-record.js";
import { decodeJobContext } from "../domain/workflow-codec.js";
import { queuedRunJobs } from "../domain/workflow-reconcile.js";
import type { Engine } from "../engine/engine.js";
import type { Store } from "../store/store.js";

export interface WorkflowUpkeepOptions {
  store: Store;
  engine: Engine;
  clock: Clock;
  log: Logger;
  /** Running instances looked at per periodic pass; deletions per retention round. */
  chunk: number;
  /** How long ended instances are kept. */
  instanceRetentionMs: number;
}

export class WorkflowUpkeep {
  /** Where the next periodic pass starts (instances newest first); undefined: from the newest. */
  private cursor: { createdAt: number; id: string } | undefined;

  constructor(private readonly o: WorkflowUpkeepOptions) {}

  /** After the sweep: the instances of workflow jobs it failed for good learn it. Returns the instances changed. */
  async afterSweep(expired: JobRecord[]): Promise<number> {
    const ids = new Set<string>();
    for (const job of expired) {
      if (job.state === "failed" && job.workflow !== undefined) ids.add(decodeJobContext(job.workflow).instanceId);
    }
    let changed = 0;
    for (const id of ids) if (await this.o.engine.workflows.reconcile(id)) changed++;
    return changed;
  }

  /**
   * One periodic pass: the next `chunk` running instances from where the last pass ended
   * (starting over from the newest after the oldest). Returns the instances changed.
   */
  async reconcilePass(): Promise<number> {
    const ws = this.o.store.workflows;
    if (!ws) return 0;
    const page = await ws.instanceList({ state: "running", limit: this.o.chunk, after: this.cursor });
    const last = page.at(-1);
    this.cursor = page.length < this.o.chunk || !last ? undefined : { createdAt: last.createdAt, id: last.id };
    const seen = await this.o.engine.workflows.seen(page.flatMap(queuedRunJobs));
    let changed = 0;
    for (const instance of page) {
      const stuck = queuedRunJobs(instance).some((id) => seen.get(id)?.state !== "live");
      if (stuck && (await this.o.engine.workflows.reconcile(instance.id))) changed++;
    }
    if (changed > 0) this.o.log.info({ instances: changed }, "workflow runs reconciled");
    return changed;
  }

  /** Deletes instances that ended more than the retention ago; returns how many. */
  async deleteEnded(): Promise<number> {
    const ws = this.o.store.workflows;
    if (!ws) return 0;
    // +1: an instance is deleted once its full retention has passed.
    const endedBefore = this.o.clock.now() - this.o.instanceRetentionMs + 1;
    let deleted = 0;
    for (;;) {
      const n = await ws.instanceDeleteEnded({ endedBefore, limit: this.o.chunk });
      deleted += n;
      if (n < this.o.chunk) break;
    }
    if (deleted > 0) this.o.log.info({ deleted }, "ended workflow instances deleted (retention)");
    return deleted;
  }
}
