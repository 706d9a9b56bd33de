/**
 * Workflows on MySQL (Store.workflows, docs/workflows.md; schema: migration 0008). Tables
 * on shard 0: workflow_versions (every version of every definition) and workflow_instances
 * (an instance's encoded state beside the columns its lists, its revision fence and
 * retention need); a workflow job's run is a jobs row whose `workflow` column holds its
 * context. An instance and every queue job it enqueues live on shard 0, where one
 * transaction reaches both: instanceInsert writes an instance with its first jobs,
 * instanceApply (instance-apply.ts) a step with the ACK of a run.
 *
 * A store opened with several shards refuses workflow writes (failed_precondition): the
 * engine places a run's queue job on any partition of its queue, which may be on another
 * shard than the instance, and no placement rule keeps them together yet. Reads still
 * answer from shard 0.
 */
import { RunlaterError } from "../../domain/errors.js";
import type { NewJob } from "../../domain/job-record.js";
import { decodeDefinition, decodeInstance, encodeDefinition, encodeInstance } from "../../domain/workflow-codec.js";
import type { WorkflowDef } from "../../domain/workflow-definition.js";
import type { WorkflowInstance } from "../../domain/workflow-transitions.js";
import { byCodeUnits, mergePages, oldestPerShard, ShardPlacement } from "../instance-placement.js";
import type { StoredWorkflow, WorkflowStore } from "../store.js";
import { insertOnShard, lockQueues } from "./insert-jobs.js";
import { applyStep, noteStep } from "./instance-apply.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { type Conn, type Param, run, type Shard, select, type TransactionOptions } from "./shard.js";
import { duplicateKeyIndex } from "./transient.js";

export class MysqlWorkflows implements WorkflowStore {
  /** Where each instance lives (with one shard: shard 0). */
  readonly placement: ShardPlacement<Shard>;

  constructor(private readonly ctx: MysqlContext) {
    this.placement = new ShardPlacement(ctx.router, "instance", async (shard, id) =>
      shard.session((c) => select(c, sql.INSTANCE_SELECT, [id]).then((rows) => rows.length > 0)),
    );
  }

  async workflowInsert(p: { def: WorkflowDef; now: number }): Promise<boolean> {
    const params = [p.def.name, p.def.version, encodeDefinition(p.def), p.now];
    try {
      await this.shard0().session((c) => run(c, sql.WORKFLOW_INSERT, params));
      return true;
    } catch (err) {
      if (duplicateKeyIndex(err) === "PRIMARY") return false;
      throw err;
    }
  }

  async workflowGet(p: { name: string; version?: number }): Promise<StoredWorkflow | undefined> {
    if (!storable(p.name)) return undefined;
    const params: Param[] = p.version === undefined ? [p.name] : [p.name, p.version];
    const [row] = await this.shard0().session((c) =>
      select<WorkflowRow>(c, sql.workflowSelect(p.version !== undefined), params),
    );
    return row && storedWorkflow(row);
  }

  async workflowList(): Promise<StoredWorkflow[]> {
    return (await this.shard0().session((c) => select<WorkflowRow>(c, sql.WORKFLOW_LATEST_ALL))).map(storedWorkflow);
  }

  async instancePartitions(p: { id: string; queues: string[] }): Promise<Map<string, number[]> | undefined> {
    if (!this.placement.sharded) return undefined;
    const stored = storable(p.id) ? await this.placement.find(p.id) : undefined;
    const index = stored ? this.placement.indexOf(stored) : await this.placement.choose(p.id, p.queues);
    return this.placement.partitionsOn(index, p.id, p.queues);
  }

  async instanceInsert(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): Promise<boolean> {
    // (With several shards, an id stored anywhere is a repeat: a shard chosen anew could differ.)
    if (this.placement.sharded && (await this.placement.find(p.instance.id))) return false;
    const shard = await this.placement.newInstanceShard(p.instance.id, p.jobs, () => this.queuesOf(p.instance));
    const exists = (c: Conn) => select(c, sql.INSTANCE_SELECT, [p.instance.id]).then((rows) => rows.length > 0);
    try {
      await withQueuesLocked(
        this.ctx,
        shard,
        p.jobs,
        async (c, lock, attempt) => {
          // (A replay after a COMMIT that may have landed finds the instance, and answers as for a repeat.)
          if (await exists(c)) throw new Exists();
          await lock();
          await insertOnShard(
            c,
            p.jobs.map((item, index) => ({ item, index })),
            p.now,
            attempt > 0,
          );
          await run(c, sql.INSTANCE_INSERT, instanceParams(p.instance));
        },
        { retryAmbiguousCommit: true },
      );
    } catch (err) {
      // Inserted by a concurrent call between our look and our INSERT: a repeat too.
      if (err instanceof Exists || (duplicateKeyIndex(err) === "PRIMARY" && (await shard.session(exists)))) {
        return false;
      }
      throw err;
    }
    this.placement.remember(p.instance.id, this.placement.indexOf(shard));
    noteStep(this.ctx, { jobs: p.jobs, cancel: [] });
    return true;
  }

  async instanceGet(p: { id: string }): Promise<WorkflowInstance | undefined> {
    if (!storable(p.id)) return undefined;
    const found = await this.placement.read(p.id, async (shard) => {
      const [row] = await shard.session((c) => select<InstanceRow>(c, sql.INSTANCE_SELECT, [p.id]));
      return row?.instance;
    });
    return found && decodeInstance(found.value);
  }

  async instanceList(p: Parameters<WorkflowStore["instanceList"]>[0]): Promise<WorkflowInstance[]> {
    if (p.workflow !== undefined && !storable(p.workflow)) return [];
    const params: Param[] = [
      ...(p.workflow !== undefined ? [p.workflow] : []),
      ...(p.state !== undefined ? [p.state] : []),
      ...(p.after ? [p.after.createdAt, p.after.createdAt, p.after.id] : []),
      p.limit,
    ];
    const statement = sql.instanceList(p.workflow !== undefined, p.state !== undefined, p.after !== undefined);
    const pages = await Promise.all(
      this.ctx.shards.map(async (shard) =>
        (await shard.session((c) => select<InstanceRow>(c, statement, params))).map((row) =>
          decodeInstance(row.instance),
        ),
      ),
    );
    return mergePages(pages, newestFirst, p.limit);
  }

  async instanceApply(p: Parameters<WorkflowStore["instanceApply"]>[0]): ReturnType<WorkflowStore["instanceApply"]> {
    // Ids come from the engine (newInstanceId); one the ascii column cannot hold names nothing here.
    if (!storable(p.id)) throw new RunlaterError("invalid_argument", "INVALID_ARGUMENT", `bad instance id "${p.id}"`);
    const shard = await this.placement.stepShard(p);
    const result = await withQueuesLocked(this.ctx, shard, p.jobs, (c, lock) =>
      applyStep(c, { ...p, instance: p.instance && instanceParams(p.instance) }, lock),
    );
    if (result.applied) noteStep(this.ctx, { jobs: p.jobs, cancel: p.cancel, ackId: p.ack?.id, ack: result.ack });
    return result;
  }

  async instanceDeleteEnded(p: { endedBefore: number; limit: number }): Promise<number> {
    const ended = await Promise.all(
      this.ctx.shards.map((shard) =>
        shard.session((c) =>
          select<{ id: string; ended_at: number | string }>(c, sql.INSTANCES_ENDED, [p.endedBefore, p.limit]),
        ),
      ),
    );
    // Several shards: the oldest ends of all, each shard deleting its own.
    const counts = oldestPerShard(
      ended.map((rows) => rows.map((r) => Number(r.ended_at))),
      p.limit,
    );
    let deleted = 0;
    for (const [i, shard] of this.ctx.shards.entries()) {
      const ids = ended[i]!.slice(0, counts[i]).map((r) => r.id);
      if (ids.length > 0)
        deleted += await shard.session((c) => run(c, sql.instancesDelete(ids.length), [...ids, p.endedBefore]));
    }
    return deleted;
  }

  /** The queues of an instance's workflow version (none if that version is unknown). */
  private async queuesOf(instance: WorkflowInstance): Promise<string[]> {
    const found = await this.workflowGet({ name: instance.workflow, version: instance.version });
    return found ? [...new Set(found.def.jobs.map((j) => j.queue))] : [];
  }

  private shard0(): Shard {
    return this.ctx.shards[0]!;
  }
}

/**
 * A transaction on `shard` that writes jobs while their queues' rows (on shard 0) are held
 * under a shared lock, so a concurrent DeleteQueue waits for it (as an enqueue does,
 * insert-jobs.ts). On shard 0, `lock` takes that lock inside the transaction, where `work`
 * calls it (after its checks); on another shard, a transaction on shard 0 takes it first
 * and holds it until `work`'s transaction has committed. That outer transaction writes
 * nothing: once `work` committed, a failure of its COMMIT loses nothing.
 */
export async function withQueuesLocked<T>(
  ctx: MysqlContext,
  shard: Shard,
  jobs: NewJob[],
  work: (c: Conn, lock: () => Promise<void>, attempt: number) => Promise<T>,
  o: TransactionOptions = {},
): Promise<T> {
  const shard0 = ctx.shards[0]!;
  if (shard === shard0) return shard0.transaction((c, attempt) => work(c, () => lockQueues(c, jobs), attempt), o);
  let done: { result: T } | undefined;
  try {
    await shard0.transaction(async (c0) => {
      await lockQueues(c0, jobs);
      done = { result: await shard.transaction((c, attempt) => work(c, async () => {}, attempt), o) };
    });
  } catch (err) {
    if (!done) throw err;
  }
  return done!.result;
}

/** The instance was there before this insert (instanceInsert answers false). */
class Exists extends Error {}

interface WorkflowRow {
  definition: string;
  created_at: number | string;
}

interface InstanceRow {
  instance: string;
}

function storedWorkflow(row: WorkflowRow): StoredWorkflow {
  return { def: decodeDefinition(row.definition), createdAt: Number(row.created_at) };
}

/** An instance's INSERT values (sql.INSTANCE_INSERT): ended_at stays NULL while it runs. */
export function instanceParams(i: WorkflowInstance): Param[] {
  return [i.id, i.workflow, i.state, i.rev, i.createdAt, i.state === "running" ? null : i.endedAt, encodeInstance(i)];
}

/**
 * Whether a name or id can be in the ascii columns that hold instance ids, workflow and
 * schedule names (a string that cannot names none; MySQL would refuse to compare it).
 */
export function storable(s: string): boolean {
  return /^[\x20-\x7e]{1,128}$/.test(s);
}

/** Newest first: created_at, then id, descending (the order sql.instanceList reads each shard in). */
function newestFirst(a: WorkflowInstance, b: WorkflowInstance): number {
  return b.createdAt - a.createdAt || byCodeUnits(b.id, a.id);
}
