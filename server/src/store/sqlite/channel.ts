/**
 * The server's side of the SQLite store's worker thread (worker.ts): starts it, sends it
 * calls by operation name (ops.ts) and settles each call's promise with its answer, in the
 * order sent. Errors come back as the RunlaterError they were (queue not found …) or as an
 * Error with the worker's message; a worker that dies fails every call then and after.
 */
import { Worker } from "node:worker_threads";
import { type ErrorCode, type ErrorReasonName, RunlaterError } from "../../domain/errors.js";
import type { MigrateResult } from "./migrate.js";
import type { OpName, OpParams, OpResult } from "./ops.js";
import type { SqliteLocation } from "./sqlite-url.js";

export interface WorkerStart {
  location: SqliteLocation;
  now: number;
}

export interface CallRequest {
  type: "call";
  id: number;
  op: OpName;
  params: unknown;
}

export type WorkerRequest = CallRequest | { type: "close" };

export interface WireError {
  message: string;
  runlater?: { code: ErrorCode; reason: ErrorReasonName; field: string };
}

export type WorkerReply =
  | { type: "ready"; path: string; migration: MigrateResult }
  | { type: "failed"; error: WireError }
  | { type: "result"; id: number; result: unknown }
  | { type: "error"; id: number; error: WireError }
  | { type: "closed" };

/** Runs worker.ts through tsx, as the server's own thread runs (bin/runlater.js). */
const BOOT = new URL("./worker-boot.mjs", import.meta.url);
const ENTRY = new URL("./worker.ts", import.meta.url).href;

export class SqliteChannel {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private dead: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly worker: Worker,
    /** The database file, absolute. */
    readonly path: string,
    readonly migration: MigrateResult,
  ) {
    worker.on("message", (reply: WorkerReply) => {
      if (reply.type !== "result" && reply.type !== "error") return;
      const call = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.type === "result") call?.resolve(reply.result);
      else call?.reject(fromWire(reply.error));
    });
    worker.on("error", (err) => this.fail(`the SQLite store's thread failed: ${err.message}`));
    worker.on("exit", () => this.fail("the SQLite store's thread has stopped"));
  }

  /** Starts the worker; resolves once it has the database open, locked and migrated. */
  static open(location: SqliteLocation, now = Date.now()): Promise<SqliteChannel> {
    const worker = new Worker(BOOT, { workerData: { start: { location, now } satisfies WorkerStart, entry: ENTRY } });
    return new Promise((resolve, reject) => {
      const onExit = (code: number) => reject(new Error(`the SQLite store's thread exited (${code}) while opening`));
      worker.once("error", reject);
      worker.once("exit", onExit);
      worker.once("message", (reply: WorkerReply) => {
        worker.off("error", reject);
        worker.off("exit", onExit);
        if (reply.type === "ready") resolve(new SqliteChannel(worker, reply.path, reply.migration));
        else {
          reject(
            reply.type === "failed"
              ? fromWire(reply.error)
              : new Error(`unexpected ${reply.type} from the SQLite thread`),
          );
          void worker.terminate();
        }
      });
    });
  }

  call<K extends OpName>(op: K, params: OpParams<K>, transfer: ArrayBuffer[] = []): Promise<OpResult<K>> {
    if (this.dead) return Promise.reject(this.dead);
    const id = ++this.nextId;
    return new Promise<OpResult<K>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.worker.postMessage({ type: "call", id, op, params } satisfies WorkerRequest, transfer);
    });
  }

  /** Answers what was sent, closes the database (lock released), ends the thread. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.dead) return resolve();
      this.worker.once("exit", () => resolve());
      this.worker.postMessage({ type: "close" } satisfies WorkerRequest);
    });
    return this.closing;
  }

  private fail(message: string): void {
    this.dead ??= new Error(message);
    for (const call of this.pending.values()) call.reject(this.dead);
    this.pending.clear();
  }
}

function fromWire(e: WireError): Error {
  return e.runlater
    ? new RunlaterError(e.runlater.code, e.runlater.reason, e.message, e.runlater.field)
    : new Error(e.message);
}
