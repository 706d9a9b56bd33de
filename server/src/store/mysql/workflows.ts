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
import { workflowsNeedOneShard } from "../placement.js";
import type { StoredWorkflow, WorkflowStore } from "../store.js";
import { insertOnShard, lockQueues } from "./insert-jobs.js";
import { applyStep, noteStep } from "./instance-apply.js";
import type { MysqlContext } from "./mysql-context.js";
import * as sql from "./queries.js";
import { type Conn, type Param, run, type Shard, select } from "./shard.js";
import { duplicateKeyIndex } from "./transient.js";

export class MysqlWorkflows implements WorkflowStore {
  constructor(private readonly ctx: MysqlContext) {}

  async workflowInsert(p: { def: WorkflowDef; now: number }): Promise<boolean> {
    const params = [p.def.name, p.def.version, encodeDefinition(p.def), p.now];
    try {
      await this.oneShard().session((c) => run(c, sql.WORKFLOW_INSERT, params));
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

  async instanceInsert(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): Promise<boolean> {
    const shard = this.oneShard();
    const exists = (c: Conn) => select(c, sql.INSTANCE_SELECT, [p.instance.id]).then((rows) => rows.length > 0);
    try {
      await shard.transaction(
        async (c, attempt) => {
          // (A replay after a COMMIT that may have landed finds the instance, and answers as for a repeat.)
          if (await exists(c)) throw new Exists();
          await lockQueues(c, p.jobs);
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
    noteStep(this.ctx, { jobs: p.jobs, cancel: [] });
    return true;
  }

  async instanceGet(p: { id: string }): Promise<WorkflowInstance | undefined> {
    if (!storable(p.id)) return undefined;
    const [row] = await this.shard0().session((c) => select<InstanceRow>(c, sql.INSTANCE_SELECT, [p.id]));
    return row && decodeInstance(row.instance);
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
    const rows = await this.shard0().session((c) => select<InstanceRow>(c, statement, params));
    return rows.map((row) => decodeInstance(row.instance));
  }

  async instanceApply(p: Parameters<WorkflowStore["instanceApply"]>[0]): ReturnType<WorkflowStore["instanceApply"]> {
    // Ids come from the engine (newInstanceId); one the ascii column cannot hold names nothing here.
    if (!storable(p.id)) throw new RunlaterError("invalid_argument", "INVALID_ARGUMENT", `bad instance id "${p.id}"`);
    const result = await this.oneShard().transaction((c) =>
      applyStep(c, { ...p, instance: p.instance && instanceParams(p.instance) }),
    );
    if (result.applied) noteStep(this.ctx, { jobs: p.jobs, cancel: p.cancel, ackId: p.ack?.id, ack: result.ack });
    return result;
  }

  async instanceDeleteEnded(p: { endedBefore: number; limit: number }): Promise<number> {
    return this.shard0().session(async (c) => {
      const ids = (await select<{ id: string }>(c, sql.INSTANCES_ENDED, [p.endedBefore, p.limit])).map((r) => r.id);
      return ids.length === 0 ? 0 : run(c, sql.instancesDelete(ids.length), [...ids, p.endedBefore]);
    });
  }

  private shard0(): Shard {
    return this.ctx.shards[0]!;
  }

  private oneShard(): Shard {
    return instancesShard(this.ctx, "workflows");
  }
}

/**
 * The instances' shard, for a write of workflows or schedules (schedules.ts); refused
 * while the store has several (see the header).
 */
export function instancesShard(ctx: MysqlContext, what: "workflows" | "schedules"): Shard {
  if (ctx.shards.length > 1) throw workflowsNeedOneShard("MySQL", ctx.shards.length, "transaction", what);
  return ctx.shards[0]!;
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
