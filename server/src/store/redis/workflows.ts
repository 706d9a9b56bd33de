/**
 * Workflows on Redis (Store.workflows, docs/workflows.md). Definitions live on shard 0 with
 * the queues' metadata; each instance (lua/include/workflows.lua), and every queue job it
 * enqueues, on the instance's shard, where one script reaches both: instance_insert.lua
 * inserts instances with their first jobs, instance_apply.lua applies steps (the ACK of a
 * run under its claim token, the instance under its revision, the jobs it enqueues and
 * cancels), each atomically; the engine sends the steps and inserts that meet in time as
 * one call (instanceApplyMany, instanceInsertMany: engine/workflows.ts). A workflow job's run is a queue job flagged in its stored head
 * (lua/include/job_record.lua), so the plain ACK scripts answer "workflow" for it without
 * writing (running-writes.ts).
 *
 * With several shards (../instance-placement.ts) an instance is placed on a shard where
 * every queue of its workflow has a partition, and its runs' jobs only on those
 * partitions; reads find it by asking every shard (cached per process), lists merge every
 * shard's page, retention deletes the oldest of all shards first.
 */
import type { Redis } from "ioredis";
import { queueNotFound } from "../../domain/errors.js";
import { LruTable } from "../../domain/lru-table.js";
import { decodeDefinition, decodeInstance, encodeDefinition, encodeInstance } from "../../domain/workflow-codec.js";
import type { WorkflowDef } from "../../domain/workflow-definition.js";
import type { WorkflowInstance } from "../../domain/workflow-transitions.js";
import { byCodeUnits, mergePages, oldestPerShard, ShardPlacement } from "../instance-placement.js";
import type {
  InstanceInsert,
  InstanceStep,
  InstanceStepResult,
  StoredWorkflow,
  WorkflowAck,
  WorkflowStore,
} from "../store.js";
import { joinable } from "./batch-args.js";
import { decodeOutcome, text } from "./codec.js";
import { pushInsertArgs } from "./insert-jobs.js";
import type { RedisContext } from "./redis-context.js";
import { runScript, type ScriptArg } from "./scripts.js";

/** Workflow versions kept decoded per process, the least recently used dropped first. */
const VERSIONS_KEPT_MAX = 256;

export class RedisWorkflows implements WorkflowStore {
  /** Where each instance lives (with one shard: shard 0). */
  readonly placement: ShardPlacement<Redis>;
  /** Workflow versions read, decoded, by "<version>@<name>" (a version never changes once written). */
  private readonly versions = new LruTable<StoredWorkflow>(VERSIONS_KEPT_MAX);

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
    // A version never changes once written, and the latest only grows: two reads are
    // enough, and a version read before is answered from memory (StartInstance reads the
    // latest at every call: one read, no decoding).
    const version = p.version ?? (await shard.hget(this.ctx.keys.workflows(), p.name));
    if (version === null) return undefined;
    const key = `${version}@${p.name}`;
    const kept = this.versions.get(key);
    if (kept) return kept;
    const stored = await shard.hget(this.ctx.keys.workflowVersions(p.name), String(version));
    if (stored === null) return undefined;
    const found = storedWorkflow(stored);
    this.versions.set(key, found);
    return found;
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

  async instanceInsert(p: InstanceInsert): Promise<boolean> {
    return answerOf((await this.instanceInsertMany([p]))[0]!);
  }

  async instanceInsertMany(inserts: InstanceInsert[]): Promise<Array<boolean | Error>> {
    const answers: Array<boolean | Error> = [];
    const shards = await Promise.all(
      inserts.map(async (p, i): Promise<Redis | undefined> => {
        try {
          // (With several shards, an id stored anywhere is a repeat: a shard chosen anew could differ.)
          if (this.placement.sharded && (await this.placement.find(p.instance.id))) {
            answers[i] = false;
            return undefined;
          }
          return await this.placement.newInstanceShard(p.instance.id, p.jobs, () => this.queuesOf(p.instance));
        } catch (err) {
          answers[i] = asError(err);
          return undefined;
        }
      }),
    );
    await eachShardInOrder(shards, async (shard, indexes) => {
      const on = this.ctx.keysOn(shard);
      const replies = await runInChunks(shard, "instance_insert", on, indexes, (args, i) => {
        const p = inserts[i]!;
        args.push(p.instance.id, ...instanceArgs(p.instance), p.jobs.length);
        for (const job of p.jobs) pushInsertArgs(args, job, p.now);
      });
      indexes.forEach((i, k) => {
        const answer = insertAnswer(replies[k]);
        if (answer === true) this.placement.remember(inserts[i]!.instance.id, this.placement.indexOf(shard));
        answers[i] = answer;
      });
    });
    return answers;
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

  async instanceApply(p: InstanceStep): Promise<InstanceStepResult> {
    return answerOf((await this.instanceApplyMany([p]))[0]!);
  }

  async instanceApplyMany(steps: InstanceStep[]): Promise<Array<InstanceStepResult | Error>> {
    const answers: Array<InstanceStepResult | Error> = [];
    const shards = await Promise.all(
      steps.map(async (p, i): Promise<Redis | undefined> => {
        try {
          return await this.placement.stepShard(p);
        } catch (err) {
          answers[i] = asError(err);
          return undefined;
        }
      }),
    );
    await eachShardInOrder(shards, async (shard, indexes) => {
      const on = this.ctx.keysOn(shard);
      const replies = await runInChunks(shard, "instance_apply", on, indexes, (args, i) => {
        const p = steps[i]!;
        args.push(
          p.now,
          p.id,
          p.rev,
          ...(p.instance ? instanceArgs(p.instance) : ["", "", "", "", "", ""]),
          ...ackArgs(p.ack),
          p.cancel.filter(joinable).join(" "),
          p.jobs.length,
        );
        for (const job of p.jobs) pushInsertArgs(args, job, p.now);
      });
      indexes.forEach((i, k) => {
        const reply = replies[k];
        answers[i] = reply instanceof Error ? reply : stepAnswer(text(reply as Buffer));
      });
    });
    return answers;
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

/**
 * Bytes of arguments per script call (unless one item alone is larger): a group's items
 * beyond it go in the next call on the same shard, in order, so that no one call holds
 * Redis for long or buffers without bound.
 */
export const SCRIPT_ARG_BYTES_MAX = 1 << 20;

/** Runs `work` for each shard named (undefined: none), with the indexes on it in order; the shards side by side. */
async function eachShardInOrder(
  shards: Array<Redis | undefined>,
  work: (shard: Redis, indexes: number[]) => Promise<void>,
): Promise<void> {
  const byShard = new Map<Redis, number[]>();
  shards.forEach((shard, i) => {
    if (!shard) return;
    const indexes = byShard.get(shard);
    if (indexes) indexes.push(i);
    else byShard.set(shard, [i]);
  });
  await Promise.all([...byShard].map(([shard, indexes]) => work(shard, indexes)));
}

/**
 * A workflow script over the items at `indexes`, in order, in as few calls as
 * SCRIPT_ARG_BYTES_MAX allows (one, but for large items): the replies, one per item. A
 * call that fails answers its items, and every later one (not sent), with its error; the
 * items of the calls before it keep their replies. `push` appends an item's arguments.
 */
async function runInChunks(
  shard: Redis,
  name: "instance_insert" | "instance_apply",
  on: { prefix: string; claimChecks(): string },
  indexes: number[],
  push: (args: ScriptArg[], index: number) => void,
): Promise<unknown[]> {
  const replies: unknown[] = [];
  let args: ScriptArg[] = [on.prefix];
  let bytes = 0;
  let failed: Error | undefined;
  const flush = async () => {
    try {
      replies.push(...((await runScript(shard, name, [on.claimChecks()], args)) as unknown[]));
    } catch (err) {
      failed = asError(err);
    }
    args = [on.prefix];
    bytes = 0;
  };
  for (const i of indexes) {
    const item: ScriptArg[] = [];
    push(item, i);
    let itemBytes = 0;
    for (const arg of item) itemBytes += argBytes(arg);
    if (args.length > 1 && bytes + itemBytes > SCRIPT_ARG_BYTES_MAX) await flush();
    if (failed) break;
    for (const arg of item) args.push(arg);
    bytes += itemBytes;
  }
  if (!failed && args.length > 1) await flush();
  while (replies.length < indexes.length) replies.push(failed);
  return replies;
}

function argBytes(arg: ScriptArg): number {
  return typeof arg === "string" ? Buffer.byteLength(arg) : typeof arg === "number" ? 8 : arg.byteLength;
}

/** One item of instance_insert.lua's reply (or the error of its call). */
function insertAnswer(reply: unknown): boolean | Error {
  if (reply instanceof Error) return reply;
  if (reply === 1) return true;
  if (reply === 0) return false;
  return scriptError(text(reply as Buffer));
}

/** One item of instance_apply.lua's reply: "<applied>", "<applied> <ack>" or "E <queue>". */
function stepAnswer(reply: string): InstanceStepResult | Error {
  if (reply.startsWith("E ")) return scriptError(reply);
  const [applied, ack] = reply.split(" ");
  return ack === undefined ? { applied: applied === "1" } : { applied: applied === "1", ack: decodeOutcome(ack) };
}

/** "E <queue>": a new job's partition is missing (that item wrote nothing). */
function scriptError(reply: string): Error {
  return queueNotFound(reply.slice(2));
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}

/** A single call's answer from its many-call's. */
function answerOf<T>(answer: T | Error): T {
  if (answer instanceof Error) throw answer;
  return answer;
}
