/**
 * The server's side of the SQLite store's worker thread (worker.ts): starts it, sends it
 * calls by operation name (ops.ts, encoded by wire.ts) and settles each call's promise with
 * its answer, in the order sent. Errors come back as the RunlaterError they were (queue not
 * found …) or as an Error with the worker's message; a worker that dies fails every call
 * then and after.
 *
 * Calls made in one turn of the event loop go over in one message, and the worker answers a
 * batch in one message: a message costs tens of microseconds on each side, whatever it holds.
 */
import { Worker } from "node:worker_threads";
import { type ErrorCode, type ErrorReasonName, RunlaterError } from "../../domain/errors.js";
import type { MigrateResult } from "./migrate.js";
import type { OpName, OpParams, OpResult } from "./ops.js";
import type { SqliteLocation } from "./sqlite-url.js";
import { decodeResult, encodeParams } from "./wire.js";

export interface WorkerStart {
  location: SqliteLocation;
  now: number;
}

export interface Call {
  id: number;
  op: OpName;
  params: unknown;
}

export type WorkerRequest = { type: "calls"; calls: Call[] } | { type: "close" };

export interface WireError {
  message: string;
  runlater?: { code: ErrorCode; reason: ErrorReasonName; field: string };
}

export type Answer = { id: number; result: unknown } | { id: number; error: WireError };

export type WorkerReply =
  | { type: "ready"; path: string; migration: MigrateResult }
  | { type: "failed"; error: WireError }
  | { type: "answers"; answers: Answer[] }
  | { type: "closed" };

/**
 * The worker's module beside this one: worker.js when built (server/dist), worker.ts when
 * run from source (tests), which worker-boot.mjs then loads through tsx.
 */
const BOOT = new URL("./worker-boot.mjs", import.meta.url);
const ENTRY = new URL(import.meta.url.endsWith(".ts") ? "./worker.ts" : "./worker.js", import.meta.url).href;

interface Pending {
  op: OpName;
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
}

export class SqliteChannel {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private outbox: Call[] = [];
  private outboxTransfer: ArrayBuffer[] = [];
  private dead: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly worker: Worker,
    /** The database file, absolute. */
    readonly path: string,
    readonly migration: MigrateResult,
  ) {
    worker.on("message", (reply: WorkerReply) => {
      if (reply.type !== "answers") return;
      for (const a of reply.answers) {
        const call = this.pending.get(a.id);
        if (!call) continue;
        this.pending.delete(a.id);
        if ("error" in a) call.reject(fromWire(a.error));
        else call.resolve(decodeResult(call.op, a.result));
      }
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

  call<K extends OpName>(op: K, params: OpParams<K>): Promise<OpResult<K>> {
    if (this.dead) return Promise.reject(this.dead);
    const id = ++this.nextId;
    const encoded = encodeParams(op, params);
    if (this.outbox.length === 0) setImmediate(() => this.send());
    this.outbox.push({ id, op, params: encoded.value });
    this.outboxTransfer.push(...encoded.transfer);
    return new Promise<OpResult<K>>((resolve, reject) => {
      this.pending.set(id, { op, resolve: resolve as (v: unknown) => void, reject });
    });
  }

  /** Answers what was sent, closes the database (lock released), ends the thread. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      if (this.dead) return resolve();
      this.send();
      this.worker.once("exit", () => resolve());
      this.worker.postMessage({ type: "close" } satisfies WorkerRequest);
    });
    return this.closing;
  }

  private send(): void {
    if (this.outbox.length === 0 || this.dead) return;
    const calls = this.outbox;
    const transfer = this.outboxTransfer;
    this.outbox = [];
    this.outboxTransfer = [];
    this.worker.postMessage({ type: "calls", calls } satisfies WorkerRequest, transfer);
  }

  private fail(message: string): void {
    this.dead ??= new Error(message);
    for (const call of this.pending.values()) call.reject(this.dead);
    this.pending.clear();
    this.outbox = [];
  }
}

function fromWire(e: WireError): Error {
  return e.runlater
    ? new RunlaterError(e.runlater.code, e.runlater.reason, e.message, e.runlater.field)
    : new Error(e.message);
}
