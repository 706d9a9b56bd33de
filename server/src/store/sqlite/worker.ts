/**
 * The thread that owns a SQLite store's database (docs/sqlite.md, "Why a worker thread"):
 * node:sqlite is synchronous, so every statement, commit and fsync runs here, never on
 * the server's event loop.
 *
 * Group commit: the calls that arrived while the previous batch ran (every message waiting
 * is taken in at once) go into one transaction, each in its own savepoint (a call that
 * fails is rolled back alone), and are answered, in one message, after the COMMIT: whatever
 * was answered OK is in the WAL (and, with synchronous=full, on disk). A batch stops taking
 * calls once it has run for BATCH_MS; the calls left over start the next one. After a failed
 * COMMIT the jobs its claims and starts took are pending and unheld, claimable again.
 */
import { parentPort, receiveMessageOnPort, Worker, workerData } from "node:worker_threads";
import { RunlaterError } from "../../domain/errors.js";
import type { Answer, Call, WireError, WorkerReply, WorkerRequest, WorkerStart } from "./channel.js";
import type { CheckpointerStart } from "./checkpointer.js";
import { SqliteContext } from "./context.js";
import { describeError, type OpenedDatabase, openDatabase } from "./open-database.js";
import { ops } from "./ops.js";
import { decodeParams, encodeResult } from "./wire.js";

/** How long one transaction takes calls in before it commits. */
const BATCH_MS = 5;

const port = parentPort!;

function serve(opened: OpenedDatabase): void {
  const ctx = new SqliteContext(opened.db);
  /** Transaction control, prepared once like every other statement. */
  const sql = (text: string) => ctx.stmt(text).run();
  const waiting: Call[] = [];
  /** Takes in every message already sent: their calls join the batch about to run. */
  const receiveWaiting = () => {
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port)) take(m.message as WorkerRequest);
  };

  function runCall(call: Call): Answer {
    sql("SAVEPOINT call");
    try {
      const run = ops[call.op] as (c: SqliteContext, p: unknown) => unknown;
      const result = run(ctx, decodeParams(call.op, call.params));
      ctx.flush();
      sql("RELEASE call");
      return { id: call.id, result };
    } catch (err) {
      ctx.discard();
      sql("ROLLBACK TO call");
      sql("RELEASE call");
      ctx.reload();
      return { id: call.id, error: toWire(err, opened.path) };
    }
  }

  function runBatch(): void {
    if (waiting.length === 0) return;
    const started = performance.now();
    const batch: Array<{ call: Call; answer: Answer }> = [];
    sql("BEGIN IMMEDIATE");
    for (let call = waiting.shift(); call; call = performance.now() - started < BATCH_MS ? waiting.shift() : undefined)
      batch.push({ call, answer: runCall(call) });
    try {
      sql("COMMIT");
      ctx.held.committed();
    } catch (err) {
      // Nothing of the batch was kept: every call in it fails.
      if (opened.db.isTransaction) sql("ROLLBACK");
      ctx.held.rolledBack();
      ctx.reload();
      const error = toWire(err, opened.path);
      for (const b of batch) b.answer = { id: b.call.id, error };
    }
    const transfer: ArrayBuffer[] = [];
    const answers = batch.map(({ call, answer }) => {
      if ("error" in answer) return answer;
      const encoded = encodeResult(call.op, answer.result);
      transfer.push(...encoded.transfer);
      return { id: call.id, result: encoded.value };
    });
    port.postMessage({ type: "answers", answers } satisfies WorkerReply, transfer);
  }

  let closing = false;
  function take(req: WorkerRequest): void {
    if (req.type === "calls") waiting.push(...req.calls);
    else closing = true;
  }

  const checkpointer = startCheckpointer(opened.path);
  port.on("message", (req: WorkerRequest) => {
    take(req);
    for (receiveWaiting(); waiting.length > 0; receiveWaiting()) runBatch();
    if (!closing) return;
    // The checkpointer first: the last connection to close folds the WAL into the file.
    void checkpointer.stop().then(() => {
      opened.close();
      port.postMessage({ type: "closed" } satisfies WorkerReply);
      port.close();
    });
  });
}

/** How often the checkpointer folds the WAL back into the file. */
const CHECKPOINT_EVERY_MS = 100;
/**
 * The writer checkpoints by itself only past this many WAL pages (40 MiB): a backstop, should
 * the checkpointer fall behind; SQLite's default, 1,000, would put it back on the write path.
 */
const WRITER_CHECKPOINT_PAGES = 10_000;
const WAL_KEEP_BYTES = 64 * 1024 * 1024;

/** The checkpointer thread (checkpointer.ts), on a connection of its own. */
function startCheckpointer(path: string): { stop(): Promise<void> } {
  const boot = new URL("./worker-boot.mjs", import.meta.url);
  const entry = new URL("./checkpointer.ts", import.meta.url).href;
  const thread = new Worker(boot, {
    workerData: { start: { path, everyMs: CHECKPOINT_EVERY_MS } satisfies CheckpointerStart, entry },
  });
  const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
  thread.on("error", () => {}); // its checkpoints are an optimisation: the writer's backstop remains
  return {
    stop() {
      thread.postMessage("stop");
      return exited;
    },
  };
}

function toWire(err: unknown, path: string): WireError {
  if (err instanceof RunlaterError)
    return { message: err.message, runlater: { code: err.code, reason: err.reason, field: err.field } };
  return { message: describeError(err, path).message };
}

const start = (workerData as { start: WorkerStart }).start;
let opened: OpenedDatabase | undefined;
try {
  opened = openDatabase(start.location, start.now);
} catch (err) {
  port.postMessage({ type: "failed", error: toWire(err, start.location.path) } satisfies WorkerReply);
  port.close();
}
if (opened) {
  opened.db.exec(`PRAGMA wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  // After a burst, the WAL file shrinks back to this when it starts over.
  opened.db.exec(`PRAGMA journal_size_limit = ${WAL_KEEP_BYTES}`);
  serve(opened);
  port.postMessage({ type: "ready", path: opened.path, migration: opened.migration } satisfies WorkerReply);
}
