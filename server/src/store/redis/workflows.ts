/**
 * Workflows on Redis (Store.workflows, docs/workflows.md). Definitions live on shard 0 with
 * the queues' metadata; each instance (lua/include/workflows.lua), and every queue job it
 * enqueues, on the instance's shard, where one script reaches both: instance_insert.lua
 * inserts an instance with its first jobs, instance_apply.lua applies a step (the ACK of a
 * run under its claim token, the instance under its revision, the jobs it enqueues and
 * cancels) atomically. A workflow job's run is a queue job flagged in its stored head
 * (lua/include/job_record.lua), so the plain ACK scripts answer "workflow" for it without
 * writing (running-writes.ts).
 *
 * With several shards (../instance-placement.ts) an instance is placed on a shard where
 * every queue of its workflow has a partition, and its runs' jobs only on those
 * partitions; reads find it by asking every shard (cached per process), lists merge every
 * shard's page, retention deletes the oldest of all shards first.
 */
import type { Redis } from "ioredis";
import type { NewJob } from "../../domain/job-record.js";
import { decodeDefinition, decodeInstance, encodeDefinition, encodeInstance } from "../../domain/workflow-codec.js";
import type { WorkflowDef } from "../../domain/workflow-definition.js";
import type { WorkflowInstance } from "../../domain/workflow-transitions.js";
import { byCodeUnits, mergePages, oldestPerShard, ShardPlacement } from "../instance-placement.js";
import type { StoredWorkflow, WorkflowAck, WorkflowStore } from "../store.js";
import { joinable } from "./batch-args.js";
import { decodeOutcome, text } from "./codec.js";
import { pushInsertArgs, runInserting } from "./insert-jobs.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg } from "./scripts.js";

export class RedisWorkflows implements WorkflowStore {
  /** Where each instance lives (with one shard: shard 0). */
  readonly placement: ShardPlacement<Redis>;

  constructor(private readonly ctx: RedisContext) {
    this.placement = new ShardPlacement(
      ctx.router,
      "instance",
      async (shard, id) => (await shard.exists(ctx.keysOn(shard).instance(id))) === 1,
    );
  }

  async workflowInsert(p: { def: WorkflowDef; now: number }): Promise<boolean> {
    const { keys } = this.ctx;
    const args = [keys.prefix, p.def.name, p.def.version, p.now, encodeDefinition(p.def)];
    const keyList = [keys.workflows(), keys.workflowVersions(p.def.name)];
    return (await runScript(this.shard0(), "workflow_insert", keyList, args)) === 1;
  }

  async workflowGet(p: { name: string; version?: number }): Promise<StoredWorkflow | undefined> {
    const shard = this.shard0();
    // A version never changes once written, and the latest only grows: two reads are enough.
    const version = p.version ?? (await shard.hget(this.ctx.keys.workflows(), p.name));
    if (version === null) return undefined;
    const stored = await shard.hget(this.ctx.keys.workflowVersions(p.name), String(version));
    return stored === null ? undefined : storedWorkflow(stored);
  }

  async workflowList(): Promise<StoredWorkflow[]> {
    const shard = this.shard0();
    const latest = await shard.hgetall(this.ctx.keys.workflows());
    const names = Object.keys(latest).sort();
    const stored = await Promise.all(
      names.map((name) => shard.hget(this.ctx.keys.workflowVersions(name), latest[name]!)),
    );
    return stored.filter((s) => s !== null).map(storedWorkflow);
  }

  async instancePartitions(p: { id: string; queues: string[] }): Promise<Map<string, number[]> | undefined> {
    if (!this.placement.sharded) return undefined;
    const stored = await this.placement.find(p.id);
    const index = stored ? this.placement.indexOf(stored) : await this.placement.choose(p.id, p.queues);
    return this.placement.partitionsOn(index, p.id, p.queues);
  }

  async instanceInsert(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): Promise<boolean> {
    // (With several shards, an id stored anywhere is a repeat: a shard chosen anew could differ.)
    if (this.placement.sharded && (await this.placement.find(p.instance.id))) return false;
    const shard = await this.placement.newInstanceShard(p.instance.id, p.jobs, () => this.queuesOf(p.instance));
    const on = this.ctx.keysOn(shard);
    const args: ScriptArg[] = [on.prefix, p.instance.id, ...instanceArgs(p.instance)];
    for (const job of p.jobs) pushInsertArgs(args, job, p.now);
    const inserted = (await runInserting(shard, "instance_insert", [on.claimChecks()], args)) === 1;
    if (inserted) this.placement.remember(p.instance.id, this.placement.indexOf(shard));
    return inserted;
  }

  async instanceGet(p: { id: string }): Promise<WorkflowInstance | undefined> {
    const found = await this.placement.read(
      p.id,
      async (shard) => (await shard.hget(this.ctx.keysOn(shard).instance(p.id), "data")) ?? undefined,
    );
    return found && decodeInstance(found.value);
  }

  async instanceList(p: Parameters<WorkflowStore["instanceList"]>[0]): Promise<WorkflowInstance[]> {
    const cursor = p.after ? listMember(p.after.createdAt, p.after.id) : "";
    const pages = await Promise.all(
      this.ctx.shards.map(async (shard) => {
        const on = this.ctx.keysOn(shard);
        const args = [on.prefix, p.workflow ?? "", p.state ?? "", p.limit, cursor];
        const found = (await runScript(shard, "instance_list", [on.instanceList()], args)) as Buffer[];
        return found.map((data) => decodeInstance(data.toString("utf8")));
      }),
    );
    return mergePages(pages, newestFirst, p.limit);
  }

  async instanceApply(p: Parameters<WorkflowStore["instanceApply"]>[0]): ReturnType<WorkflowStore["instanceApply"]> {
    const shard = await this.placement.stepShard(p);
    const on = this.ctx.keysOn(shard);
    const args: ScriptArg[] = [
      on.prefix,
      p.now,
      p.id,
      p.rev,
      ...(p.instance ? instanceArgs(p.instance) : ["", "", "", "", "", ""]),
      ...ackArgs(p.ack),
      p.cancel.filter(joinable).join(" "),
    ];
    for (const job of p.jobs) pushInsertArgs(args, job, p.now);
    const reply = text(await runInserting(shard, "instance_apply", [on.claimChecks()], args));
    const [applied, ack] = reply.split(" ");
    return ack === undefined ? { applied: applied === "1" } : { applied: applied === "1", ack: decodeOutcome(ack) };
  }

  async instanceDeleteEnded(p: { endedBefore: number; limit: number }): Promise<number> {
    const shards = this.ctx.shards;
    // Several shards: first how many of the oldest ends each holds, then each deletes its own.
    const counts =
      shards.length === 1
        ? [p.limit]
        : oldestPerShard(
            await Promise.all(
              shards.map(async (shard) => {
                const key = this.ctx.keysOn(shard).instancesEnded();
                const found = await shard.zrangebyscore(
                  key,
                  "-inf",
                  `(${p.endedBefore}`,
                  "WITHSCORES",
                  "LIMIT",
                  0,
                  p.limit,
                );
                return found.filter((_, i) => i % 2 === 1).map(Number);
              }),
            ),
            p.limit,
          );
    let deleted = 0;
    for (const [i, shard] of shards.entries()) {
      if (counts[i] === 0) continue;
      const on = this.ctx.keysOn(shard);
      const args = [on.prefix, p.endedBefore, counts[i]!];
      deleted += (await runScript(shard, "instance_delete_ended", [on.instancesEnded()], args)) as number;
    }
    return deleted;
  }

  /** The queues of an instance's workflow version (none if that version is unknown). */
  private async queuesOf(instance: WorkflowInstance): Promise<string[]> {
    const found = await this.workflowGet({ name: instance.workflow, version: instance.version });
    return found ? [...new Set(found.def.jobs.map((j) => j.queue))] : [];
  }

  private shard0(): Redis {
    return this.ctx.shards[0]!;
  }
}

/** An instance as the workflow scripts take it: rev, state, workflow, created_at, ended_at, data. */
export function instanceArgs(i: WorkflowInstance): ScriptArg[] {
  return [i.rev, i.state, i.workflow, i.createdAt, i.endedAt, encodeInstance(i)];
}

/** instance_apply.lua's ACK arguments: kind, job id, claim token, status, retry delay, no retry. */
function ackArgs(ack: WorkflowAck | undefined): ScriptArg[] {
  if (!ack) return ["", "", "", "", "", "0"];
  if (ack.kind === "complete") return ["c", ack.id, ack.claimToken, ack.customStatus, "", "0"];
  return ["f", ack.id, ack.claimToken, ack.customStatus, ack.retryDelayMs ?? "", ack.noRetry ? "1" : "0"];
}

/** A list member (lua/include/workflows.lua): created_at as 16 digits, then the id. */
function listMember(createdAt: number, id: string): string {
  return `${String(createdAt).padStart(16, "0")}${id}`;
}

/** "<created_at> <definition>" as workflow_insert.lua stores a version. */
function storedWorkflow(stored: string): StoredWorkflow {
  const space = stored.indexOf(" ");
  return { def: decodeDefinition(stored.slice(space + 1)), createdAt: Number(stored.slice(0, space)) };
}

/** Newest first: created_at, then id, descending (the order instance_list.lua reads each shard in). */
function newestFirst(a: WorkflowInstance, b: WorkflowInstance): number {
  return b.createdAt - a.createdAt || byCodeUnits(b.id, a.id);
}
