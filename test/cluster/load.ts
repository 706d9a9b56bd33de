/**
 * Load for cluster tests: a producer that records every acknowledged enqueue, and
 * consumers (plain Dequeue/Ack loops over the TS SDK's client, not the SDK Worker: a
 * Worker whose node died retries its acks forever, and the tests need to know exactly
 * which job each consumer received, when, and which acks were lost) that tally every job
 * handed to them, so duplicates can be counted.
 */
import { durationFromMs } from "@bufbuild/protobuf/wkt";
import { createRunlaterClient, type DequeuedJob, type JobState, Outcome, type RunlaterClient } from "@runlater/sdk";
import { sleep } from "./harness.js";

const running = new Set<{ stop(): Promise<void> }>();

/** Stops every consumer and producer still running (a test that failed half-way). */
export async function stopLoad(): Promise<void> {
  await Promise.all([...running].map((r) => r.stop()));
}

/** The partition a job id names (`<queue>.<partition>.<unique>`). */
export const partitionOf = (jobId: string): number => Number(jobId.split(".")[1]);

export interface Receipt {
  consumer: string;
  at: number;
  attempt: number;
}

/** Every job handed to any consumer, and what became of its ack. */
export class Tally {
  readonly receipts = new Map<string, Receipt[]>();
  /** Job id → when a worker's Ack for it came back ACKNOWLEDGED. */
  readonly acked = new Map<string, number>();
  staleAcks = 0;
  /** Jobs whose Ack call failed (node gone or call timed out). */
  lostAcks = 0;

  receive(jobId: string, consumer: string, attempt: number): void {
    const list = this.receipts.get(jobId) ?? [];
    list.push({ consumer, at: Date.now(), attempt });
    this.receipts.set(jobId, list);
  }

  /** Job ids handed to workers more than once (a worker ran them more than once). */
  duplicates(): string[] {
    return [...this.receipts].filter(([, r]) => r.length > 1).map(([id]) => id);
  }

  /**
   * For each duplicate, the shortest time between two of its hand-outs. A job may only be
   * handed out again once its claim expired, so none may be much below the claim timeout.
   */
  redeliveryGaps(): Array<{ id: string; gapMs: number }> {
    return this.duplicates().map((id) => {
      const at = this.receipts.get(id)!.map((r) => r.at);
      let gapMs = Infinity;
      for (let i = 1; i < at.length; i++) gapMs = Math.min(gapMs, at[i]! - at[i - 1]!);
      return { id, gapMs };
    });
  }

  /** Jobs handed to a worker after a worker's Ack for them was ACKNOWLEDGED (must never happen). */
  receivedAfterAck(): string[] {
    return [...this.acked]
      .filter(([id, ackedAt]) => this.receipts.get(id)!.some((r) => r.at > ackedAt))
      .map(([id]) => id);
  }

  /** When the first job of `partition` was handed out at or after `since` (undefined: never). */
  firstReceiptAfter(partition: number, since: number): number | undefined {
    let first: number | undefined;
    for (const [id, list] of this.receipts) {
      if (partitionOf(id) !== partition) continue;
      for (const r of list) if (r.at >= since && (first === undefined || r.at < first)) first = r.at;
    }
    return first;
  }

  get received(): number {
    let n = 0;
    for (const list of this.receipts.values()) n += list.length;
    return n;
  }
}

export interface ConsumerOptions {
  name: string;
  url: string;
  queue: string;
  tally: Tally;
  batch: number;
  /** Simulated work per batch, between Dequeue and Ack. */
  workMs?: number;
  /** Long-poll wait of each Dequeue (default 300 ms). */
  waitMs?: number;
  /** Deadline of each call (default 2 s): calls to a paused node end instead of hanging. */
  callTimeoutMs?: number;
}

/** A worker: Dequeue a batch from one node, "work", Ack on the same node, repeat. */
/** A client loop (consumer or producer) that stopLoad() can end if a test fails half-way. */
abstract class Loop {
  protected stopped = false;
  private loop: Promise<void> | undefined;

  constructor(protected readonly client: RunlaterClient) {}

  start(): this {
    running.add(this);
    this.loop = this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    running.delete(this);
    await this.loop;
    this.client.close();
  }

  protected abstract run(): Promise<void>;
}

export class Consumer extends Loop {
  /** Jobs received and not yet acked (or whose ack is in flight). */
  inFlight = 0;
  errors = 0;
  lastError = "";

  constructor(readonly o: ConsumerOptions) {
    super(createRunlaterClient(o.url, { timeoutMs: o.callTimeoutMs ?? 2_000 }));
  }

  get name(): string {
    return this.o.name;
  }

  protected async run(): Promise<void> {
    const { queue, tally, batch } = this.o;
    while (!this.stopped) {
      let jobs: DequeuedJob[];
      try {
        ({ jobs } = await this.client.worker.dequeue({
          queue,
          limit: batch,
          wait: durationFromMs(this.o.waitMs ?? 300),
          workerId: this.o.name,
        }));
      } catch (err) {
        this.fail(err);
        await sleep(100);
        continue;
      }
      if (jobs.length === 0) continue;
      this.inFlight = jobs.length;
      for (const j of jobs) tally.receive(j.jobId, this.o.name, j.attempt);
      if (this.o.workMs) await sleep(this.o.workMs);
      try {
        const { results } = await this.client.worker.ack({
          queue,
          succeeded: jobs.map((j) => ({ jobId: j.jobId, claimToken: j.claimToken })),
        });
        for (const r of results) {
          if (r.outcome === Outcome.ACKNOWLEDGED) tally.acked.set(r.jobId, Date.now());
          else tally.staleAcks++;
        }
      } catch (err) {
        this.fail(err);
        tally.lostAcks += jobs.length;
      }
      this.inFlight = 0;
    }
  }

  private fail(err: unknown): void {
    this.errors++;
    this.lastError = err instanceof Error ? err.message : String(err);
  }
}

/** Enqueues batches through one node and keeps the ids the server acknowledged. */
export class Producer extends Loop {
  readonly ids: string[] = [];
  failures = 0;
  lastError = "";

  constructor(
    url: string,
    private readonly queue: string,
    private readonly o: { batch: number; pauseMs: number; max?: number },
  ) {
    super(createRunlaterClient(url, { timeoutMs: 5_000 }));
  }

  protected async run(): Promise<void> {
    let n = 0;
    while (!this.stopped && (this.o.max === undefined || this.ids.length < this.o.max)) {
      try {
        const { jobIds } = await this.client.jobs.enqueue({
          jobs: Array.from({ length: this.o.batch }, () => ({
            queue: this.queue,
            body: new TextEncoder().encode(`job ${n++}`),
          })),
        });
        this.ids.push(...jobIds);
      } catch (err) {
        this.failures++;
        this.lastError = err instanceof Error ? err.message : String(err);
      }
      await sleep(this.o.pauseMs);
    }
  }
}

/** Jobs of `queue` in `state` (CountJobs). */
export async function count(client: RunlaterClient, queue: string, state: JobState): Promise<number> {
  return Number((await client.jobs.countJobs({ queue, state })).count);
}

/** The state of each job (GetJobs in chunks of 1000); ids not found map to undefined. */
export async function statesOf(client: RunlaterClient, ids: string[]): Promise<Map<string, JobState | undefined>> {
  const states = new Map<string, JobState | undefined>();
  for (let i = 0; i < ids.length; i += 1000) {
    const { jobs, notFoundJobIds } = await client.jobs.getJobs({ jobIds: ids.slice(i, i + 1000) });
    for (const j of jobs) states.set(j.jobId, j.state);
    for (const id of notFoundJobIds) states.set(id, undefined);
  }
  return states;
}
