/**
 * The SQLite store's checkpointer thread (started by worker.ts): every CHECKPOINT_EVERY_MS it
 * copies what the WAL holds back into the database file (a PASSIVE checkpoint: it waits for
 * nobody) on a connection of its own. A checkpoint writes pages and fsyncs twice; run by the
 * writing connection, as SQLite does by default, it sat inside a COMMIT, and every call of
 * that batch, and of the batches queued behind it, waited for the disk (commits of 60–150 ms
 * at the 99th percentile on a busy disk, a third of the writer's time). Here it delays no one.
 * The writer keeps SQLite's own checkpoint as a backstop, at a size this thread never lets
 * the WAL reach when it keeps up (worker.ts).
 */
import { DatabaseSync } from "node:sqlite";
import { parentPort, workerData } from "node:worker_threads";

export interface CheckpointerStart {
  /** The database file, absolute. */
  path: string;
  everyMs: number;
}

const port = parentPort!;
const { path, everyMs } = (workerData as { start: CheckpointerStart }).start;
const db = new DatabaseSync(path, { timeout: 0 });
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
const timer = setInterval(() => {
  try {
    checkpoint.get();
  } catch {
    // Busy (another checkpoint runs) or the file went away at shutdown: the next tick tries again.
  }
}, everyMs);
port.once("message", () => {
  clearInterval(timer);
  db.close();
  port.close();
});
