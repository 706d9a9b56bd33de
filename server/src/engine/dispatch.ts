/**
 * What the engine needs from the broker side: hand out jobs, and hear that jobs became
 * due or queues changed. One node's Broker implements it directly; in a cluster the
 * Router (cluster/router.ts) does, sending each call to the broker that owns the
 * partition, this one or another.
 */
import type { JobRecord } from "../domain/job-record.js";
import type { QueueConfig } from "../domain/queue-config.js";

export interface DispatchDequeue {
  queue: string;
  limit: number;
  waitMs: number;
  signal?: AbortSignal;
  /** Sent by another node: serve it from this node's own partitions, never forward it again. */
  forwarded?: boolean;
  /** The forwarding node's id for this call, which it names if it cancels the call (ClusterService.ReleaseForwarded). */
  forwardedCall?: string;
}

export interface Dispatch {
  dequeue(p: DispatchDequeue): Promise<JobRecord[]>;
  /** A job of `queue`/`partition` is (or will be, at `dueAt`) pending; `priority` undefined = unknown. */
  notify(queue: string, partition: number, dueAt: number, priority?: number): void;
  onQueueUpdated(name: string, config: QueueConfig): void;
  onQueueDeleted(name: string): void;
}
