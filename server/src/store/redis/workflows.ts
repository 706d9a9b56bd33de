/**
 * Workflows on Redis (Store.workflows, docs/workflows.md). Definitions live on shard 0 with
 * the queues' metadata; instances (lua/include/workflows.lua), and every queue job they
 * enqueue, on the instances' shard, where one script reaches both: instance_insert.lua
 * inserts an instance with its first jobs, instance_apply.lua applies a step (the ACK of a
 * run under its claim token, the instance under its revision, the jobs it enqueues and
 * cancels) atomically. A workflow job's run is a queue job flagged in its stored head
 * (lua/include/job_record.lua), so the plain ACK scripts answer "workflow" for it without
 * writing (running-writes.ts).
 *
 * The instances' shard is shard 0, and a store opened with several shards refuses to keep
 * workflows (failed_precondition): the engine places a run's queue job on any partition of
 * its queue, which may be on another shard than the instance, and no placement rule keeps
 * them together yet. Reads still answer from shard 0.
 */
import type { Redis } from "ioredis";
import type { NewJob } from "../../domain/job-record.js";
import { decodeDefinition, decodeInstance, encodeDefinition, encodeInstance } from "../../domain/workflow-codec.js";
import type { WorkflowDef } from "../../domain/workflow-definition.js";
import type { WorkflowInstance } from "../../domain/workflow-transitions.js";
import { workflowsNeedOneShard } from "../placement.js";
import type { StoredWorkflow, WorkflowAck, WorkflowStore } from "../store.js";
import { joinable } from "./batch-args.js";
import { decodeOutcome, text } from "./codec.js";
import { pushInsertArgs, runInserting } from "./insert-jobs.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg } from "./scripts.js";

export class RedisWorkflows implements WorkflowStore {
  constructor(private readonly ctx: RedisContext) {}

  async workflowInsert(p: { def: WorkflowDef; now: number }): Promise<boolean> {
    const { keys } = this.ctx;
    const args = [keys.prefix, p.def.name, p.def.version, p.now, encodeDefinition(p.def)];
    const keyList = [keys.workflows(), keys.workflowVersions(p.def.name)];
    return (await runScript(this.oneShard(), "workflow_insert", keyList, args)) === 1;
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

  async instanceInsert(p: { instance: WorkflowInstance; jobs: NewJob[]; now: number }): Promise<boolean> {
    const args: ScriptArg[] = [this.ctx.keys.prefix, p.instance.id, ...instanceArgs(p.instance)];
    for (const job of p.jobs) pushInsertArgs(args, job, p.now);
    return (await runInserting(this.oneShard(), "instance_insert", [this.ctx.keys.claimChecks()], args)) === 1;
  }

  async instanceGet(p: { id: string }): Promise<WorkflowInstance | undefined> {
    const data = await this.shard0().hget(this.ctx.keys.instance(p.id), "data");
    return data === null ? undefined : decodeInstance(data);
  }

  async instanceList(p: Parameters<WorkflowStore["instanceList"]>[0]): Promise<WorkflowInstance[]> {
    const cursor = p.after ? listMember(p.after.createdAt, p.after.id) : "";
    const args = [this.ctx.keys.prefix, p.workflow ?? "", p.state ?? "", p.limit, cursor];
    const found = (await runScript(this.shard0(), "instance_list", [this.ctx.keys.instanceList()], args)) as Buffer[];
    return found.map((data) => decodeInstance(data.toString("utf8")));
  }

  async instanceApply(p: Parameters<WorkflowStore["instanceApply"]>[0]): ReturnType<WorkflowStore["instanceApply"]> {
    const args: ScriptArg[] = [
      this.ctx.keys.prefix,
      p.now,
      p.id,
      p.rev,
      ...(p.instance ? instanceArgs(p.instance) : ["", "", "", "", "", ""]),
      ...ackArgs(p.ack),
      p.cancel.filter(joinable).join(" "),
    ];
    for (const job of p.jobs) pushInsertArgs(args, job, p.now);
    const reply = text(await runInserting(this.oneShard(), "instance_apply", [this.ctx.keys.claimChecks()], args));
    const [applied, ack] = reply.split(" ");
    return ack === undefined ? { applied: applied === "1" } : { applied: applied === "1", ack: decodeOutcome(ack) };
  }

  async instanceDeleteEnded(p: { endedBefore: number; limit: number }): Promise<number> {
    const args = [this.ctx.keys.prefix, p.endedBefore, p.limit];
    return (await runScript(this.shard0(), "instance_delete_ended", [this.ctx.keys.instancesEnded()], args)) as number;
  }

  private shard0(): Redis {
    return this.ctx.shards[0]!;
  }

  private oneShard(): Redis {
    return instancesShard(this.ctx, "workflows");
  }
}

/**
 * The instances' shard, for a write of workflows or schedules (schedules.ts); refused
 * while the store has several (see the header).
 */
export function instancesShard(ctx: RedisContext, what: "workflows" | "schedules"): Redis {
  if (ctx.shards.length > 1) throw workflowsNeedOneShard("Redis", ctx.shards.length, "script", what);
  return ctx.shards[0]!;
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
