/**
 * Where workflow instances and schedules live on a store of several shards (Redis, MySQL:
 * docs/workflows.md, "Stores of several shards"). An instance and the queue jobs of its
 * runs must sit where one atomic step (one Lua script, one transaction) reaches them, and
 * a schedule beside what its fires start. So each instance (each schedule) is placed on
 * ONE shard, and its runs' queue jobs go only on partitions of their queues on that shard:
 *
 * - Candidates: the shards on which every queue the workflow's jobs name (a schedule: what
 *   it starts) has at least one partition, by the stored placement maps (placement.ts).
 *   Among them, the key (instance id, schedule name) picks one by its hash, so instances
 *   spread over the shards. No candidate: failed_precondition naming the queues.
 * - Once stored, the record's shard is where it is found (fan-out reads over the shards,
 *   cached by key: a record never moves). Maps only grow while a queue lives, so the shard
 *   keeps partitions of every queue; a queue deleted and created again with another
 *   placement may not, and then a step that would enqueue on it is refused (the error
 *   names the queue), never written to another shard.
 *
 * Stores of one shard skip all of this (the engine then picks among every partition).
 */
import { crc32 } from "node:zlib";
import { RunlaterError } from "../domain/errors.js";
import { parseJobId } from "../domain/job-id.js";
import type { NewJob } from "../domain/job-record.js";
import type { Schedule } from "../domain/schedule.js";
import type { ScheduleNames } from "./schedule-names.js";
import type { ShardRouter } from "./shard-router.js";

/** Located records remembered per process (ids and names; a record never changes shard). */
const CACHE_MAX = 10_000;

/** What is placed: an instance (by id) or a schedule (by name), for messages. */
export type Placed = "instance" | "schedule";

export class ShardPlacement<S> {
  private readonly located = new Map<string, number>();

  /**
   * @param router the store's routing (its shards and placement maps)
   * @param what what this placement keeps, for messages
   * @param exists whether the record `key` is stored on a shard
   */
  constructor(
    private readonly router: ShardRouter<S>,
    private readonly what: Placed,
    private readonly exists: (shard: S, key: string) => Promise<boolean>,
  ) {}

  get sharded(): boolean {
    return this.router.shards.length > 1;
  }

  /**
   * The shard holding `key`, or undefined if none does. A remembered shard is answered
   * unread: a record never moves, and a step on one deleted meanwhile finds nothing there.
   */
  async find(key: string): Promise<S | undefined> {
    const cached = this.located.get(key);
    if (cached !== undefined || !this.sharded) return this.router.shards[cached ?? 0];
    return (await this.read(key, async (shard) => ((await this.exists(shard, key)) ? shard : undefined)))?.value;
  }

  /**
   * Reads `key` where it lives: on the shard it was last seen on, else on every shard at
   * once (the first answer found is kept, and its shard remembered). Undefined: no shard has it.
   */
  async read<T>(
    key: string,
    readOn: (shard: S) => Promise<T | undefined>,
  ): Promise<{ value: T; shard: S } | undefined> {
    const shards = this.router.shards;
    const cached = this.located.get(key);
    const tried = cached ?? (shards.length === 1 ? 0 : undefined);
    if (tried !== undefined) {
      const value = await readOn(shards[tried]!);
      if (value !== undefined || shards.length === 1)
        return value === undefined ? undefined : { value, shard: shards[tried]! };
    }
    const values = await Promise.all(shards.map((s, i) => (i === tried ? undefined : readOn(s))));
    const index = values.findIndex((v) => v !== undefined);
    if (index < 0) {
      this.located.delete(key);
      return undefined;
    }
    this.remember(key, index);
    return { value: values[index]!, shard: shards[index]! };
  }

  /** Notes where `key` was just written, so the next step on it reads one shard. */
  remember(key: string, index: number): void {
    this.located.delete(key);
    this.located.set(key, index);
    if (this.located.size > CACHE_MAX) this.located.delete(this.located.keys().next().value!);
  }

  /**
   * The shard a new record `key` goes on: one where every queue of `queues` has a
   * partition, picked by the hash of `key`. failed_precondition when there is none.
   */
  async choose(key: string, queues: string[]): Promise<number> {
    const maps = await this.maps(queues);
    const candidates = this.router.shards
      .map((_, shard) => shard)
      .filter((shard) => queues.every((q) => maps.get(q)!.includes(shard)));
    if (candidates.length === 0) throw noSharedShard(this.what, key, queues, maps, this.router.shards.length);
    return candidates[crc32(key) % candidates.length]!;
  }

  /** The partitions of each queue on shard `index`; failed_precondition naming a queue that has none there. */
  async partitionsOn(index: number, key: string, queues: string[]): Promise<Map<string, number[]>> {
    const maps = await this.maps(queues);
    const allowed = new Map<string, number[]>();
    for (const queue of queues) {
      const on = maps
        .get(queue)!
        .map((shard, partition) => (shard === index ? partition : -1))
        .filter((p) => p >= 0);
      if (on.length === 0) throw notOnShard(this.what, key, queue, index);
      allowed.set(queue, on);
    }
    return allowed;
  }

  /**
   * Checks that every job of a step is on shard `index` (the record's): a job planned from
   * an older view of a queue (deleted and created again elsewhere) is refused, not written
   * on a shard its record cannot reach.
   */
  async checkJobs(index: number, key: string, jobs: NewJob[]): Promise<void> {
    if (jobs.length === 0) return;
    const maps = await this.maps(jobs.map((j) => j.queue));
    for (const job of jobs) {
      if (this.router.placement.shardIn(maps.get(job.queue), job.queue, job.partition) !== index)
        throw notOnShard(this.what, key, job.queue, index);
    }
  }

  /**
   * The shard a new instance goes on: its first jobs' (all checked to be there), else the
   * one its workflow's queues choose (`queues` reads them).
   */
  async newInstanceShard(id: string, jobs: NewJob[], queues: () => Promise<string[]>): Promise<S> {
    const shards = this.router.shards;
    if (!this.sharded) return shards[0]!;
    const shard = (await jobsShard(this.router, jobs)) ?? shards[await this.choose(id, await queues())]!;
    await this.checkJobs(this.indexOf(shard), id, jobs);
    return shard;
  }

  /**
   * The shard of an instance's step, its new jobs checked to be there: the instance's, else
   * (it is gone: the ACK alone) the shard of its ACK's job.
   */
  async stepShard(p: { id: string; jobs: NewJob[]; ack?: { id: string } }): Promise<S> {
    const shards = this.router.shards;
    if (!this.sharded) return shards[0]!;
    const where = p.ack && parseJobId(p.ack.id);
    const shard =
      (await this.find(p.id)) ?? (where ? await this.router.shardOf(where.queue, where.partition) : shards[0]!);
    await this.checkJobs(this.indexOf(shard), p.id, p.jobs);
    return shard;
  }

  /**
   * Inserts a new schedule on a store of several shards: on the shard its target's queues
   * choose (`workflowGet` reads a workflow's latest version), under a claim of its name
   * (`names`, ../schedule-names.ts), and remembers that shard once it is there.
   */
  async insertSchedule(
    names: ScheduleNames,
    p: { schedule: Schedule; max: number },
    workflowGet: Parameters<typeof scheduleQueues>[1],
  ): Promise<"inserted" | "exists" | "full"> {
    const name = p.schedule.name;
    const index = await this.choose(name, await scheduleQueues(p.schedule.target, workflowGet));
    const reply = await names.insert(p.schedule, index, p.max);
    if (reply === "inserted") this.remember(name, index);
    return reply;
  }

  /** The index of a shard handle. */
  indexOf(shard: S): number {
    return this.router.shards.indexOf(shard);
  }

  /** The current map of each queue (not_found for a queue that does not exist). */
  private async maps(queues: string[]): Promise<Map<string, number[]>> {
    const unique = [...new Set(queues)];
    const maps = await this.router.placement.maps(new Map(unique.map((q) => [q, 0])));
    for (const queue of unique) {
      if (!maps.has(queue))
        throw new RunlaterError("not_found", "QUEUE_NOT_FOUND", `queue "${queue}" does not exist`, "queue");
    }
    return maps;
  }
}

/** The shard a step's jobs are all on (the first job's), or undefined without jobs. */
export function jobsShard<S>(router: ShardRouter<S>, jobs: NewJob[]): Promise<S | undefined> {
  const first = jobs[0];
  return first ? router.shardOf(first.queue, first.partition) : Promise.resolve(undefined);
}

function noSharedShard(
  what: Placed,
  key: string,
  queues: string[],
  maps: Map<string, number[]>,
  shards: number,
): RunlaterError {
  const where = [...new Set(queues)]
    .map((q) => `${q} on shard${maps.get(q)!.length > 1 ? "s" : ""} ${[...new Set(maps.get(q))].sort().join(",")}`)
    .join("; ");
  return new RunlaterError(
    "failed_precondition",
    "UNSPECIFIED",
    `${what} ${key}: no shard of the ${shards} holds a partition of every queue it uses (${where}); an ${what} and the queue jobs it starts must share a shard: give these queues at least ${shards} partitions each (UpdateQueue), so every shard has one (docs/workflows.md#stores-of-several-shards)`,
  );
}

function notOnShard(what: Placed, key: string, queue: string, shard: number): RunlaterError {
  return new RunlaterError(
    "failed_precondition",
    "UNSPECIFIED",
    `${what} ${key} lives on shard ${shard}, where queue "${queue}" has no partition (was it deleted and created again?); its queue jobs must stay on its shard: give queue ${queue} a partition on every shard (at least as many partitions as shards), or start a new ${what === "instance" ? "instance" : "schedule"} (docs/workflows.md#stores-of-several-shards)`,
  );
}

/**
 * The first `limit` items of pages read from each shard, each page already in `order`:
 * how a listing across shards answers in the order (and with the cursor) of one shard's.
 */
export function mergePages<T>(pages: T[][], order: (a: T, b: T) => number, limit: number): T[] {
  return pages.flat().sort(order).slice(0, limit);
}

/** Code-unit order of two ids or names (byte order for the ASCII ones stores keep). */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The queues a schedule's fires enqueue on: its job's, or those of its workflow's latest version. */
export async function scheduleQueues(
  target: { kind: "job"; queue: string } | { kind: "workflow"; workflow: string },
  workflowGet: (name: string) => Promise<{ def: { jobs: Array<{ queue: string }> } } | undefined>,
): Promise<string[]> {
  if (target.kind === "job") return [target.queue];
  const found = await workflowGet(target.workflow);
  return found ? [...new Set(found.def.jobs.map((j) => j.queue))] : [];
}

/**
 * scheduleDue across shards: the `limit` earliest due schedules of every shard's answer
 * (earliest next fire first, ties by name), and the earliest next fire after now among them.
 */
export function mergeDue<T extends { name: string; nextFireAt: number }>(
  pages: Array<{ due: T[]; next?: number }>,
  limit: number,
): { due: T[]; nextDueAt?: number } {
  const due = mergePages(
    pages.map((p) => p.due),
    (a, b) => a.nextFireAt - b.nextFireAt || byCodeUnits(a.name, b.name),
    limit,
  );
  const next = pages.map((p) => p.next).filter((n) => n !== undefined);
  return next.length === 0 ? { due } : { due, nextDueAt: Math.min(...next) };
}

/**
 * How many of each shard's oldest ended instances the `limit` oldest of all are, from each
 * shard's end times in order (retention across shards deletes oldest first, as on one).
 */
export function oldestPerShard(endedAt: number[][], limit: number): number[] {
  const all = endedAt.flatMap((times, shard) => times.map((at) => ({ at, shard })));
  const counts = endedAt.map(() => 0);
  for (const { shard } of all.sort((a, b) => a.at - b.at || a.shard - b.shard).slice(0, limit)) counts[shard]!++;
  return counts;
}
