/**
 * Loads lua/*.lua (one file per store method, each with a KEYS/ARGV/returns header) and
 * defines each on a client with ioredis's defineCommand, which sends EVALSHA and falls
 * back to EVAL (loading the script) only when the server does not have it yet.
 *
 * Two expansions happen at load time: a `--@include <name>` line is replaced by
 * lua/include/<name>.lua (the shared helpers), and `{{name}}` by a value from
 * domain/limits.ts, so the scripts and the engine share one set of numbers. Includes are
 * expanded in one pass (an include names none of its own), so a script lists each one it
 * needs, in order: each include's header says which must come before it.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { limits } from "../../domain/limits.js";

const dir = new URL("./lua/", import.meta.url);

export type ScriptName =
  | "instance_apply"
  | "instance_delete_ended"
  | "instance_insert"
  | "instance_list"
  | "job_checkpoint_many"
  | "job_claim_expire"
  | "job_claim_many"
  | "job_complete_many"
  | "job_delete_finished"
  | "job_delete_ids"
  | "job_fail_many"
  | "job_get_many"
  | "job_insert_many"
  | "job_next_due_at"
  | "job_peek_many"
  | "job_release_buffered"
  | "job_retry_failed"
  | "job_scan"
  | "job_start_many"
  | "lease_acquire"
  | "lease_release"
  | "queue_create"
  | "queue_purge"
  | "queue_stats"
  | "queue_update"
  | "schedule_delete"
  | "schedule_due"
  | "schedule_fence"
  | "schedule_fire"
  | "schedule_insert"
  | "schedule_list"
  | "schedule_name_swap"
  | "schedule_replace"
  | "workflow_insert";

export type ScriptArg = string | number | Buffer | Uint8Array;

function expand(source: string): string {
  return source
    .replace(/^--@include (\w+)$/gm, (_, name: string) => readFileSync(new URL(`include/${name}.lua`, dir), "utf8"))
    .replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
      const value = (limits as Record<string, number>)[name];
      if (value === undefined) throw new Error(`lua: unknown limit {{${name}}}`);
      return String(value);
    });
}

let sources: Map<string, string> | undefined;

/** The expanded scripts, read once per process. */
export function scriptSources(): Map<string, string> {
  if (!sources) {
    sources = new Map();
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith(".lua"))
      .sort()) {
      sources.set(file.slice(0, -4), expand(readFileSync(new URL(file, dir), "utf8")));
    }
  }
  return sources;
}

export function defineScripts(client: Redis): void {
  for (const [name, lua] of scriptSources()) client.defineCommand(name, { lua });
}

type BufferCommand = (numKeys: number, ...args: Array<string | number | Buffer>) => Promise<unknown>;

/**
 * Runs a script with replies as Buffers (the `…Buffer` variant), so bodies stay
 * byte-exact end to end.
 */
export function runScript(client: Redis, name: ScriptName, keys: string[], args: ScriptArg[]): Promise<unknown> {
  const command = (client as unknown as Record<string, BufferCommand>)[`${name}Buffer`];
  if (!command) throw new Error(`lua script ${name} is not defined`);
  const wire = args.map((a) =>
    a instanceof Uint8Array && !Buffer.isBuffer(a) ? Buffer.from(a.buffer, a.byteOffset, a.byteLength) : a,
  ) as Array<string | number | Buffer>;
  return command.call(client, keys.length, ...keys, ...wire);
}
