import type { Clock } from "../domain/clock.js";
import { queueNotFound } from "../domain/errors.js";
import { validateQueueName } from "../domain/queue-config.js";
import type { QueueRecord, Store } from "../store/store.js";

/** How long a cached queue record is trusted. */
const QUEUE_CACHE_MS = 1000;

/**
 * Queue records read on the hot path (enqueue, ack, checkpoint) are cached briefly so a
 * call costs no extra store round trip. Local changes invalidate at once (forget); a
 * change made through another node is seen within QUEUE_CACHE_MS (stores still refuse
 * writes to a queue that no longer exists).
 */
export class QueueCache {
  private readonly entries = new Map<string, { record: QueueRecord; at: number }>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** The queue's record; NOT_FOUND (naming `field`) if it does not exist. `fresh` reads the store whatever the cache holds. */
  async get(name: string, field: string, fresh = false): Promise<QueueRecord> {
    validateQueueName(name, field);
    const now = this.clock.now();
    const cached = this.entries.get(name);
    if (!fresh && cached && now - cached.at < QUEUE_CACHE_MS) return cached.record;
    const record = await this.store.queueGet({ name });
    if (!record) {
      this.entries.delete(name);
      throw queueNotFound(name, field);
    }
    this.entries.set(name, { record, at: now });
    return record;
  }

  /** The cached record, if any, without reading the store (fresh or not). */
  peek(name: string): QueueRecord | undefined {
    return this.entries.get(name)?.record;
  }

  forget(name: string): void {
    this.entries.delete(name);
  }
}
