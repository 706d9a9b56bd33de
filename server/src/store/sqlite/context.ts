/**
 * What the SQLite store's operations share inside the thread that owns the database
 * (worker.ts): the connection, its prepared statements, mirrors of the small tables that
 * every hot call reads (queues, the next enqueue-order number), and the jobs brokers hold.
 * One process owns the file (file-lock.ts), so nothing else writes behind these mirrors; a
 * call that fails reloads them (reload).
 */
import type { DatabaseSync, SQLInputValue, StatementSync } from "node:sqlite";
import type { StoredState } from "../../domain/job-record.js";
import type { QueueConfig } from "../../domain/queue-config.js";
import { visibleState } from "../../domain/transitions.js";
import type { QueueRecord } from "../store.js";
import { HeldJobs } from "./held-jobs.js";

export class SqliteContext {
  private readonly statements = new Map<string, StatementSync>();
  /** The queues by name, as their rows hold them. */
  readonly queues = new Map<string, QueueRecord>();
  /** Queues whose jobs a DeleteQueue is removing chunk by chunk: gone for every other call. */
  readonly deleting = new Set<string>();
  /** What brokers claimed and have not started or released: the buffered state (held-jobs.ts). */
  readonly held = new HeldJobs();
  /** The next enqueue-order number (jobs.seq, and key_pos when a job rejoins its ordering key). */
  private seq = 1;
  private seqDirty = false;
  /** Changes to queue_counts made by the current call, by "queue\u0000visible state"; written at its end. */
  private readonly countDeltas = new Map<string, number>();

  constructor(readonly db: DatabaseSync) {
    this.reload();
  }

  /** The prepared statement for `sql`, made once. Every statement text is a constant of this module's callers. */
  stmt(sql: string): StatementSync {
    let s = this.statements.get(sql);
    if (!s) this.statements.set(sql, (s = this.db.prepare(sql)));
    return s;
  }

  get<T>(sql: string, ...params: SQLInputValue[]): T | undefined {
    return this.stmt(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, ...params: SQLInputValue[]): T[] {
    return this.stmt(sql).all(...params) as T[];
  }

  run(sql: string, ...params: SQLInputValue[]): number {
    return Number(this.stmt(sql).run(...params).changes);
  }

  /** A live queue (not being deleted), or undefined. */
  queue(name: string): QueueRecord | undefined {
    return this.deleting.has(name) ? undefined : this.queues.get(name);
  }

  config(name: string): QueueConfig | undefined {
    return this.queue(name)?.config;
  }

  /** Takes the next enqueue-order number (flush() records where numbering stands). */
  nextSeq(): number {
    this.seqDirty = true;
    return this.seq++;
  }

  /** Notes `n` jobs of `queue` moving from state `from` to `to` (undefined: in or out of the store). */
  count(queue: string, from: StoredState | undefined, to: StoredState | undefined, n = 1): void {
    const a = from && visibleState(from);
    const b = to && visibleState(to);
    if (a === b || n === 0) return;
    if (a) this.addCount(queue, a, -n);
    if (b) this.addCount(queue, b, n);
  }

  private addCount(queue: string, state: string, n: number): void {
    const key = `${queue}\u0000${state}`;
    this.countDeltas.set(key, (this.countDeltas.get(key) ?? 0) + n);
  }

  /** Ends a call: the counts it moved and where numbering stands, in the same transaction as its writes. */
  flush(): void {
    for (const [key, n] of this.countDeltas) {
      if (n === 0) continue;
      const [queue, state] = key.split("\u0000") as [string, string];
      this.run(
        "INSERT INTO queue_counts (queue, state, n) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET n = n + excluded.n",
        queue,
        state,
        n,
      );
    }
    this.countDeltas.clear();
    if (this.seqDirty) {
      this.run(
        "INSERT INTO meta (name, value) VALUES ('next_seq', ?) ON CONFLICT DO UPDATE SET value = excluded.value",
        this.seq,
      );
      this.seqDirty = false;
    }
  }

  /** Forgets what a failed call noted (its writes were rolled back). */
  discard(): void {
    this.countDeltas.clear();
  }

  /** Reads the mirrors from the file again: at open, and after a rolled-back write. */
  reload(): void {
    this.queues.clear();
    for (const row of this.all<{ name: string; config: string; created_at: number }>(
      "SELECT name, config, created_at FROM queues",
    ))
      this.queues.set(row.name, {
        name: row.name,
        config: JSON.parse(row.config) as QueueConfig,
        createdAt: row.created_at,
      });
    const saved = this.get<{ value: number }>("SELECT value FROM meta WHERE name = 'next_seq'")?.value ?? 1;
    const max = this.get<{ m: number | null }>("SELECT MAX(seq) AS m FROM jobs")?.m ?? 0;
    this.seq = Math.max(saved, max + 1);
    this.seqDirty = false;
  }
}
