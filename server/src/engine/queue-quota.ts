/**
 * The cap on how many queues a store holds (`runlater serve --max-queues`): each queue
 * costs memory on every broker that owns one of its partitions and a line in every
 * listing, so code that makes a queue per user must hit a clear error, not exhaust the
 * server. Counting every queue on each create would make a burst of creates quadratic, so
 * the count is read from the store at most once per REFRESH_MS and kept up by this node's
 * own creates and deletes; near the cap it is read again before a create is refused.
 * Nodes of a cluster creating at the same moment can each pass with the last slot: the
 * overshoot is at most the creates made on other nodes within REFRESH_MS (docs/limits.md).
 */
import type { Clock } from "../domain/clock.js";
import { RunlaterError } from "../domain/errors.js";
import type { Store } from "../store/store.js";

const REFRESH_MS = 1000;

export class QueueQuota {
  private count = 0;
  private readAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** The most queues the store may hold. */
    readonly max: number,
  ) {}

  /** Throws resource_exhausted if a new queue would pass the cap. */
  async checkRoom(name: string): Promise<void> {
    if (this.clock.now() - this.readAt >= REFRESH_MS) await this.read();
    if (this.count < this.max) return;
    await this.read(); // the cached count may be stale: deletes on other nodes
    if (this.count < this.max) return;
    throw new RunlaterError(
      "resource_exhausted",
      "UNSPECIFIED",
      `queue "${name}" would be queue ${this.count + 1} of at most ${this.max} (runlater serve --max-queues): delete unused queues, or raise the limit`,
      "name",
    );
  }

  created(): void {
    this.count++;
  }

  deleted(): void {
    this.count = Math.max(0, this.count - 1);
  }

  private async read(): Promise<void> {
    this.count = (await this.store.queueList()).length;
    this.readAt = this.clock.now();
  }
}
