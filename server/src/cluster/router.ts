/**
 * The engine's Dispatch in a cluster: sends each Dequeue to the brokers that own the
 * queue's partitions and each due-job announcement to the partition's owner.
 *
 * Dequeue (any node, any queue; workers need not know the assignment):
 * 1. If this node owns every partition of the queue, its broker answers directly.
 * 2. Otherwise the owners are asked one after another without waiting (this node's own
 *    broker first, then the others in rotation), and the first that has jobs answers.
 * 3. If none had any and the caller wants to wait, all owners are asked at once with the
 *    remaining wait; the first to hand out jobs wins, the others are cancelled, and jobs
 *    any of them still handed out are put straight back to pending (charging nothing):
 *    those whose answers arrive here by this node, those of answers the cancellation cut
 *    off by their broker, told which calls were cancelled (ForwardedAnswers).
 * A broker that cannot be reached counts as empty; if every owner fails the call fails
 * with `unavailable` (as it does when no broker is alive at all).
 *
 * Notifications are batched per peer and sent once per event-loop turn.
 */
import { randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Logger } from "pino";
import type { Broker } from "../broker/broker.js";
import type { Clock } from "../domain/clock.js";
import { queueNotFound, RunlaterError } from "../domain/errors.js";
import type { JobRecord } from "../domain/job-record.js";
import type { QueueConfig } from "../domain/queue-config.js";
import type { Dispatch, DispatchDequeue } from "../engine/dispatch.js";
import type { NotifyRequest, PartitionDueSchema } from "../gen/runlater/cluster/v1/cluster_pb.js";
import type { Store } from "../store/store.js";
import { ForwardedAnswers, type HandedOut } from "./forwarded-answers.js";
import type { Membership } from "./membership.js";
import type { Peers } from "./peers.js";

export interface RouterOptions {
  membership: Membership;
  /** This node's broker; undefined on a frontend. */
  local?: Broker;
  peers: Peers;
  store: Store;
  clock: Clock;
  log: Logger;
}

/**
 * After one owner's answer wins a long-poll race, how long the other calls may still
 * deliver jobs they already started (released at once) before they are cancelled.
 */
const LOSER_GRACE_MS = 250;

/** How long a queue's partition count is trusted before it is read again. */
const PARTITIONS_CACHE_MS = 1000;

interface Target {
  id: string;
  /** undefined: this node's own broker. */
  url?: string;
}

interface PendingNotify {
  due: Map<string, MessageInitShape<typeof PartitionDueSchema> & { dueAtMs: bigint; priority: number }>;
  changed: Set<string>;
  deleted: Set<string>;
}

export class Router implements Dispatch {
  private readonly partitionCounts = new Map<string, { count: number; at: number }>();
  private readonly outbox = new Map<string, PendingNotify>();
  private flushScheduled = false;
  private turn = 0;
  /** Puts jobs that were handed out to nobody back to pending; set by the engine's owner. */
  release: (jobs: HandedOut[]) => Promise<void> = async () => {};
  /** This broker's answers to forwarded calls, until the caller might still cancel them. */
  private readonly answers: ForwardedAnswers;

  constructor(private readonly o: RouterOptions) {
    this.answers = new ForwardedAnswers(o.clock, (jobs) => this.release(jobs));
  }

  async dequeue(p: DispatchDequeue): Promise<JobRecord[]> {
    const local = this.o.local;
    if (p.forwarded) {
      if (!local)
        throw new RunlaterError(
          "unavailable",
          "NO_BROKER",
          "this node runs --role frontend and owns no partitions: send Dequeue to any node without the forwarded header",
        );
      // The sender's view of the owners is behind ours: answer at once instead of holding
      // its long poll on partitions we do not serve; it asks again with a fresher view.
      if (!(await local.ownsAnyOf(p.queue))) return [];
      const jobs = await local.dequeue(p);
      if (p.forwardedCall !== undefined && jobs.length > 0)
        this.background(this.answers.answered(p.forwardedCall, jobs), p.queue);
      return jobs;
    }
    let targets = await this.targets(p.queue);
    if (targets.length === 0) {
      await this.o.membership.refreshNow();
      targets = await this.targets(p.queue);
    }
    if (targets.length === 0) {
      throw new RunlaterError(
        "unavailable",
        "NO_BROKER",
        `no broker is alive to hand out jobs of queue "${p.queue}"; enqueues still work. Start one with: runlater serve --role broker`,
      );
    }
    if (targets.length === 1 && targets[0]!.url === undefined) return local!.dequeue(p);

    const deadline = this.o.clock.now() + p.waitMs;
    let failures = 0;
    let lastError: unknown;
    for (const t of targets) {
      if (p.signal?.aborted) return [];
      try {
        const jobs = await this.call(t, { ...p, waitMs: 0 });
        if (jobs.length > 0) return jobs;
      } catch (err) {
        failures++;
        lastError = err;
      }
    }
    if (failures === targets.length) throw this.unreachable(p.queue, lastError);
    const left = deadline - this.o.clock.now();
    return left > 0 && !p.signal?.aborted ? this.race(targets, { ...p, waitMs: left }) : [];
  }

  notify(queue: string, partition: number, dueAt: number, priority?: number): void {
    const count = this.partitionCounts.get(queue)?.count;
    if (count === undefined) {
      // The owner depends on the queue's partition count: learn it, then route.
      void this.partitionCount(queue).then(
        () => this.notify(queue, partition, dueAt, priority),
        () => {},
      );
      return;
    }
    // A count read before the queue grew is fine: a misrouted notice is caught by the owner's re-check.
    const owner = this.o.membership.ownerOf(queue, partition, Math.max(count, partition + 1));
    if (!owner) return; // Nobody to tell: the next owner claims from the store when it starts.
    if (owner.id === this.o.membership.selfId) {
      this.o.local?.notify(queue, partition, dueAt, priority);
      return;
    }
    const due = this.pending(owner.url).due;
    const key = `${queue}/${partition}`;
    const prev = due.get(key);
    due.set(key, {
      queue,
      partition,
      dueAtMs: BigInt(Math.min(dueAt, prev ? Number(prev.dueAtMs) : dueAt)),
      priority: Math.min(priority ?? 0, prev?.priority ?? Number.POSITIVE_INFINITY),
    });
    this.scheduleFlush();
  }

  onQueueUpdated(name: string, config: QueueConfig): void {
    this.partitionCounts.delete(name);
    this.o.local?.onQueueUpdated(name, config);
    for (const url of this.peerUrls()) this.pending(url).changed.add(name);
    this.scheduleFlush();
  }

  onQueueDeleted(name: string): void {
    this.partitionCounts.delete(name);
    this.o.local?.onQueueDeleted(name);
    for (const url of this.peerUrls()) this.pending(url).deleted.add(name);
    this.scheduleFlush();
  }

  /** ClusterService.ReleaseForwarded arrived: the node that forwarded these calls cancelled them unread. */
  cancelledForwarded(callIds: string[]): void {
    for (const id of callIds) this.background(this.answers.cancelled(id));
  }

  /** ClusterService.Notify arrived from another node. */
  receive(req: NotifyRequest): void {
    const local = this.o.local;
    if (!local) return;
    for (const d of req.due)
      local.notify(d.queue, d.partition, Number(d.dueAtMs), d.priority === 0 ? undefined : d.priority);
    for (const name of req.queuesChanged) {
      this.partitionCounts.delete(name);
      void local.reloadQueue(name).catch((err) => this.o.log.warn({ err, queue: name }, "queue reload failed"));
    }
    for (const name of req.queuesDeleted) {
      this.partitionCounts.delete(name);
      local.onQueueDeleted(name);
    }
  }

  // ---- internals

  /** The brokers owning partitions of `queue`: this node's first, then the rest in rotation. */
  private async targets(queue: string): Promise<Target[]> {
    const owners = this.o.membership.ownersOf(queue, await this.partitionCount(queue));
    const self = this.o.membership.selfId;
    const remote: Target[] = owners.filter((b) => b.id !== self).map((b) => ({ id: b.id, url: b.url }));
    const own: Target | undefined = owners.some((b) => b.id === self) ? { id: self! } : undefined;
    const start = remote.length > 0 ? this.turn++ % remote.length : 0;
    const rotated = [...remote.slice(start), ...remote.slice(0, start)];
    return own ? [own, ...rotated] : rotated;
  }

  private call(t: Target, p: DispatchDequeue, callId?: string): Promise<JobRecord[]> {
    if (t.url === undefined)
      return this.o.local!.dequeue({ queue: p.queue, limit: p.limit, waitMs: p.waitMs, signal: p.signal });
    return this.o.peers
      .dequeue(t.url, { queue: p.queue, limit: p.limit, waitMs: p.waitMs, signal: p.signal, callId })
      .catch((err: unknown) => {
        if (!p.signal?.aborted) this.o.log.debug({ err, broker: t.id, queue: p.queue }, "forwarded dequeue failed");
        throw err;
      });
  }

  /** Long poll on every owner at once; the first non-empty answer wins. */
  private race(targets: Target[], p: DispatchDequeue): Promise<JobRecord[]> {
    return new Promise((resolve, reject) => {
      const controllers = targets.map(() => new AbortController());
      // Remote calls carry an id, named to their broker if they are cancelled before they
      // answer: an answer already on its way is dropped by the cancellation, and only
      // that broker knows which jobs it held.
      const callIds = targets.map((t) => (t.url === undefined ? undefined : randomBytes(9).toString("base64url")));
      const answered = targets.map(() => false);
      const cancelAll = () => {
        controllers.forEach((c, i) => {
          if (c.signal.aborted) return;
          c.abort();
          const url = targets[i]!.url;
          if (url !== undefined && !answered[i])
            this.background(this.o.peers.releaseForwarded(url, [callIds[i]!]), p.queue);
        });
      };
      p.signal?.addEventListener("abort", cancelAll, { once: true });
      let settled = false;
      let open = targets.length;
      let failures = 0;
      let lastError: unknown;
      const finish = (jobs: JobRecord[] | undefined, err?: unknown) => {
        settled = true;
        p.signal?.removeEventListener("abort", cancelAll);
        // The others are not cut off at once: an owner that answered at about the same
        // time has started its jobs and its answer is on the wire, and cancelling the
        // call would drop that answer, stranding the jobs until their claims time out
        // (seen under load when jobs reached several owners at once). Answers arriving
        // within the grace are released below; then the calls still waiting are cancelled.
        if (open > 0) setTimeout(cancelAll, LOSER_GRACE_MS).unref();
        if (err !== undefined) reject(err);
        else resolve(jobs ?? []);
      };
      targets.forEach((t, i) => {
        this.call(t, { ...p, signal: controllers[i]!.signal }, callIds[i])
          .then(
            (jobs) => {
              answered[i] = true;
              if (jobs.length === 0) return;
              if (settled) {
                // Handed out after another owner answered: nobody will run these.
                this.background(this.release(jobs), p.queue);
              } else {
                finish(jobs);
              }
            },
            (err: unknown) => {
              failures++;
              lastError = err;
            },
          )
          .finally(() => {
            if (--open > 0 || settled) return;
            if (failures === targets.length && !p.signal?.aborted)
              finish(undefined, this.unreachable(p.queue, lastError));
            else finish([]);
          });
      });
    });
  }

  /** Hand-backs run in the background: a failure leaves the jobs to their claim timeout, so it is only logged. */
  private background(releasing: Promise<void>, queue?: string): void {
    releasing.catch((err) => this.o.log.warn({ err, queue }, "could not release undelivered jobs"));
  }

  private unreachable(queue: string, cause: unknown): RunlaterError {
    const detail = cause instanceof Error ? `: ${cause.message}` : "";
    return new RunlaterError(
      "unavailable",
      "NO_BROKER",
      `no broker owning partitions of queue "${queue}" could be reached${detail}; retry shortly`,
    );
  }

  private async partitionCount(queue: string): Promise<number> {
    const now = this.o.clock.now();
    const cached = this.partitionCounts.get(queue);
    if (cached && now - cached.at < PARTITIONS_CACHE_MS) return cached.count;
    const record = await this.o.store.queueGet({ name: queue });
    if (!record) {
      this.partitionCounts.delete(queue);
      throw queueNotFound(queue);
    }
    this.partitionCounts.set(queue, { count: record.config.partitions, at: now });
    return record.config.partitions;
  }

  private peerUrls(): string[] {
    return this.o.membership
      .brokers()
      .filter((b) => b.id !== this.o.membership.selfId)
      .map((b) => b.url);
  }

  private pending(url: string): PendingNotify {
    let p = this.outbox.get(url);
    if (!p) {
      p = { due: new Map(), changed: new Set(), deleted: new Set() };
      this.outbox.set(url, p);
    }
    return p;
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      const batches = [...this.outbox];
      this.outbox.clear();
      for (const [url, p] of batches) {
        this.o.peers
          .notify(url, { due: [...p.due.values()], queuesChanged: [...p.changed], queuesDeleted: [...p.deleted] })
          .catch((err) => this.o.log.debug({ err, url }, "notify failed; the broker's own checks will find the jobs"));
      }
    });
  }
}
