/**
 * The SQLite store (node:sqlite, WAL): the durable embedded default of `runlater serve`.
 * docs/sqlite.md has the schema, the durability of each synchronous level, and why the
 * database lives in a worker thread.
 *
 * How it keeps the store's rules:
 * - Every job change is a patch from domain/transitions.ts, decided on the row as read in
 *   the same transaction and written back (job-writes.ts): one connection, one writer, so
 *   nothing slips in between a read and its write.
 * - The claim and the start check the lease epoch, ACK and checkpoint the claim token, in
 *   the transaction that writes.
 * - One process owns the file (file-lock.ts): a second server on it is refused, so the
 *   store can trust what it mirrors in memory (queues, counts' deltas, numbering).
 * - A call is answered after the COMMIT of the group it ran in (worker.ts): an Enqueue or
 *   Ack answered OK is in the WAL.
 *
 * The class makes the channel to the database's thread; each Store method is a function of
 * store-functions.ts (../delegating-store.ts hands it the context), which sends operations
 * (ops.ts) by concern: broker-registry.ts, leases.ts, queue-admin.ts, insert-jobs.ts
 * (enqueue), hand-out.ts (claim, start, release), running-writes.ts (ACK, checkpoint, claim
 * expiry), bulk-admin.ts (GC, delete, retry) and job-reads.ts. Store.workflows and
 * Store.schedules are workflow-store.ts, over the operations of workflows.ts and
 * schedules.ts (with instance-writes.ts).
 */
import { DelegatingStore } from "../delegating-store.js";
import { SqliteChannel } from "./channel.js";
import type { MigrateResult } from "./migrate.js";
import { parseSqliteUrl, type SqliteLocation, type Synchronous } from "./sqlite-url.js";
import { functions, type SqliteStoreContext } from "./store-functions.js";
import { SqliteSchedules, SqliteWorkflows } from "./workflow-store.js";

/** Opens (creating, locking and migrating) the database a sqlite: URL names. */
export async function openSqliteStore(url: string | SqliteLocation): Promise<SqliteStore> {
  const location = typeof url === "string" ? parseSqliteUrl(url) : url;
  if (!process.getBuiltinModule?.("node:sqlite"))
    throw new Error(
      `the SQLite store needs node:sqlite, built into Node 22.13 and later; this is Node ${process.versions.node}: ` +
        "upgrade Node, or choose another store (--store memory, redis://… or mysql://…)",
    );
  return new SqliteStore(await SqliteChannel.open(location), location.synchronous);
}

export class SqliteStore extends DelegatingStore<SqliteStoreContext> {
  readonly name = "sqlite";
  readonly defaultBufferSize = 1000;
  protected readonly ctx: SqliteStoreContext;
  /** Workflows (workflow-store.ts over workflows.ts): each method one operation on the database's thread. */
  readonly workflows: SqliteWorkflows;
  /** Schedules (workflow-store.ts over schedules.ts): a fire is one operation with what it starts. */
  readonly schedules: SqliteSchedules;

  constructor(
    channel: SqliteChannel,
    readonly synchronous: Synchronous,
  ) {
    super(functions);
    this.ctx = { channel, deletions: new Map() };
    this.workflows = new SqliteWorkflows(channel);
    this.schedules = new SqliteSchedules(channel);
  }

  /** The database file, absolute. */
  get path(): string {
    return this.ctx.channel.path;
  }

  /** What opening the file did to its schema. */
  get migration(): MigrateResult {
    return this.ctx.channel.migration;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.ctx.deletions.values());
    await this.ctx.channel.close();
  }
}
