/**
 * The changes this process makes to one workflow instance, taken one after another, with
 * the instance as the last of them left it.
 *
 * Why: the runs of one instance often end together (b, c and d of a diamond), and each
 * outcome is decided on the instance as read and applied only over that revision. Decided
 * side by side, all but one lose the revision race and read, decide and write again; taken
 * in turn, each decides on the instance the previous one wrote, which this process already
 * holds, so it skips the read as well. Other processes (a cluster's other nodes) may still
 * change the instance: the store then refuses the stale revision, the cached copy is
 * dropped, and the step reads the instance again, as it always did.
 */
import { LruTable } from "../domain/lru-table.js";
import { instanceBytes, type WorkflowInstance } from "../domain/workflow-transitions.js";

/** Instances whose latest revision this process keeps, the least recently used dropped first. */
export const INSTANCES_CACHED_MAX = 4096;
/** ...and their size at most (as stored, about: instanceBytes), however large each one is. */
export const INSTANCES_CACHED_BYTES_MAX = 64 * 1024 * 1024;

export class InstanceSteps {
  /**
   * The tail of each instance's line of steps; removed when the line empties. A plain
   * object, not a Map: an entry comes and goes with every step (domain/lru-table.ts).
   */
  private readonly lines: Record<string, Promise<unknown>> = Object.create(null);
  private readonly latest: LruTable<WorkflowInstance>;

  constructor(cachedMax = INSTANCES_CACHED_MAX, cachedBytesMax = INSTANCES_CACHED_BYTES_MAX) {
    this.latest = new LruTable(cachedMax, { weigh: instanceBytes, maxWeight: cachedBytesMax });
  }

  /** Runs `step` once the steps on instance `id` that came before it have settled. */
  inTurn<T>(id: string, step: () => Promise<T>): Promise<T> {
    const before = this.lines[id] ?? Promise.resolve();
    const mine = before.then(step, step);
    const tail = mine.then(
      () => {},
      () => {},
    );
    this.lines[id] = tail;
    void tail.then(() => {
      if (this.lines[id] === tail) delete this.lines[id];
    });
    return mine;
  }

  /** The instance as this process last wrote it, if still kept. */
  cached(id: string): WorkflowInstance | undefined {
    return this.latest.get(id);
  }

  /** The store now holds `instance` (this process wrote it); an ended one is not kept. */
  wrote(instance: WorkflowInstance): void {
    if (instance.state === "running") this.latest.set(instance.id, instance);
    else this.latest.delete(instance.id);
  }

  /** The cached copy may be stale (a write over its revision was refused): read it again next time. */
  forget(id: string): void {
    this.latest.delete(id);
  }
}
