/**
 * Every operation the thread that owns the database runs (worker.ts), by name: each module
 * by concern exports operations only, each synchronous, bounded (by its caller's batch size
 * or an explicit limit) and run inside one savepoint of a group commit. store-functions.ts,
 * on the server's thread, calls them by name through the channel (channel.ts).
 */
import * as brokers from "./broker-registry.js";
import * as bulk from "./bulk-admin.js";
import * as handOut from "./hand-out.js";
import * as insert from "./insert-jobs.js";
import * as reads from "./job-reads.js";
import * as leases from "./leases.js";
import * as queues from "./queue-admin.js";
import * as running from "./running-writes.js";
import * as schedules from "./schedules.js";
import * as tokens from "./tokens.js";
import * as workflows from "./workflows.js";

export const ops = {
  ...brokers,
  ...bulk,
  ...handOut,
  ...insert,
  ...reads,
  ...leases,
  ...queues,
  ...running,
  ...schedules,
  ...tokens,
  ...workflows,
};

export type Ops = typeof ops;
export type OpName = keyof Ops;
/** An operation's parameters, as they cross to the database's thread. */
export type OpParams<K extends OpName> = Parameters<Ops[K]>[1];
export type OpResult<K extends OpName> = ReturnType<Ops[K]>;
