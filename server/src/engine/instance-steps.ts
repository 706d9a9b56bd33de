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
import type { WorkflowInstance } from "../domain/workflow-transitions.js";

/** Instances whose latest revision this process keeps, the least recently used dropped first. */
export const INSTANCES_CACHED_MAX = 4096;

export class InstanceSteps {
  /** The tail of each instance's line of steps; removed when the line empties. */
  private readonly lines = new Map<string, Promise<unknown>>();
  private readonly latest = new Map<string, WorkflowInstance>();

  constructor(private readonly cachedMax = INSTANCES_CACHED_MAX) {}

  /** Runs `step` once the steps on instance `id` that came before it have settled. */
  inTurn<T>(id: string, step: () => Promise<T>): Promise<T> {
    const before = this.lines.get(id) ?? Promise.resolve();
    const mine = before.then(step, step);
    const tail = mine.then(
      () => {},
      () => {},
    );
    this.lines.set(id, tail);
    void tail.then(() => {
      if (this.lines.get(id) === tail) this.lines.delete(id);
    });
    return mine;
  }

  /** The instance as this process last wrote it, if still kept. */
  cached(id: string): WorkflowInstance | undefined {
    const instance = this.latest.get(id);
    if (instance) {
      // Most recently used last: Map keeps insertion order.
      this.latest.delete(id);
      this.latest.set(id, instance);
    }
    return instance;
  }

  /** The store now holds `instance` (this process wrote it); an ended one is not kept. */
  wrote(instance: WorkflowInstance): void {
    this.latest.delete(instance.id);
    if (instance.state !== "running") return;
    this.latest.set(instance.id, instance);
    if (this.latest.size > this.cachedMax) this.latest.delete(this.latest.keys().next().value!);
  }

  /** The cached copy may be stale (a write over its revision was refused): read it again next time. */
  forget(id: string): void {
    this.latest.delete(id);
  }
}
