/**
 * A broker's memory of its recent answers to forwarded Dequeue calls (docs/cluster.md).
 * The frontend races a long poll over several owners and cancels the losers; an answer a
 * loser had already sent is then dropped unread, and its jobs would sit RUNNING until their
 * claims time out. The frontend names the calls it cancelled (ClusterService.
 * ReleaseForwarded); the broker hands back what it answered to them. Either message may come
 * first, so a cancellation of a call not answered yet is remembered too. Both kinds of entry
 * live a few seconds: a cancellation follows its answer within the frontend's grace plus a
 * network delay. Only ids and claim tokens are kept, never bodies.
 */
import type { Clock } from "../domain/clock.js";

export interface HandedOut {
  id: string;
  claimToken: string;
}

/** How long an answer or a cancellation is kept waiting for the other. */
export const FORWARDED_MEMORY_MS = 10_000;
/** Calls and jobs kept at most (the oldest go first): a bound on memory whatever the call rate. */
const MAX_ENTRIES = 10_000;
const MAX_JOBS = 100_000;

type Entry = { at: number } & ({ kind: "answered"; jobs: HandedOut[] } | { kind: "cancelled" });

export class ForwardedAnswers {
  /** By call id, oldest first (Map keeps insertion order). */
  private readonly entries = new Map<string, Entry>();
  private keptJobs = 0;

  constructor(
    private readonly clock: Clock,
    /** Puts undelivered jobs back to PENDING (Engine.releaseUndelivered); errors are the caller's to log. */
    private readonly release: (jobs: HandedOut[]) => Promise<void>,
  ) {}

  /** This broker answered forwarded call `callId` with `jobs`. */
  answered(callId: string, jobs: HandedOut[]): Promise<void> {
    this.prune();
    const entry = this.entries.get(callId);
    if (entry?.kind === "cancelled") {
      this.forget(callId);
      return this.release(jobs);
    }
    if (jobs.length > 0)
      this.remember(callId, {
        at: this.clock.now(),
        kind: "answered",
        jobs: jobs.map(({ id, claimToken }) => ({ id, claimToken })),
      });
    return Promise.resolve();
  }

  /** The node that made forwarded call `callId` cancelled it without reading an answer. */
  cancelled(callId: string): Promise<void> {
    this.prune();
    const entry = this.entries.get(callId);
    this.forget(callId);
    if (entry?.kind === "answered") return this.release(entry.jobs);
    this.remember(callId, { at: this.clock.now(), kind: "cancelled" });
    return Promise.resolve();
  }

  get size(): number {
    return this.entries.size;
  }

  private remember(callId: string, entry: Entry): void {
    this.entries.set(callId, entry);
    if (entry.kind === "answered") this.keptJobs += entry.jobs.length;
    while (this.entries.size > MAX_ENTRIES || this.keptJobs > MAX_JOBS) this.forget(this.entries.keys().next().value!);
  }

  private forget(callId: string): void {
    const entry = this.entries.get(callId);
    if (entry?.kind === "answered") this.keptJobs -= entry.jobs.length;
    this.entries.delete(callId);
  }

  private prune(): void {
    const before = this.clock.now() - FORWARDED_MEMORY_MS;
    for (const [id, entry] of this.entries) {
      if (entry.at > before) break;
      this.forget(id);
    }
  }
}
