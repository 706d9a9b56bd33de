/** Types shared by the worker's parts and its users. */

/** What the worker was doing when something went wrong (for logs and metrics). */
export interface WorkerErrorContext {
  /** "dequeue", "ack", "checkpoint" (claim extension), "snooze", "release" or "handler". */
  op: "dequeue" | "ack" | "checkpoint" | "snooze" | "release" | "handler";
  /** The job concerned, when there is one. */
  jobId?: string;
  /** op "handler": the attempt that failed, and the attempts allowed in all. */
  attempt?: number;
  attemptsAllowed?: number;
}

/**
 * Told about every problem the worker handles by itself: failed calls it will retry,
 * refused acks, lost claims, handler errors. The worker never stops because of one.
 */
export type WorkerErrorHandler = (error: unknown, context: WorkerErrorContext) => void;
