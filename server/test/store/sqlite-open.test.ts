/**
 * Opening a SQLite store's file: what a user relies on when it goes right (created on
 * first use, everything there again after a restart, one owner at a time) and the error
 * they get when it does not (bad path, unwritable directory, locked, corrupt, not a
 * database, someone else's database, a newer schema): always a message naming the file,
 * never a crash or a hang.
 */
import { existsSync, mkdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { handOut, insert, lease, T0 } from "../storetest/fixtures.js";
import { SqliteFiles } from "./sqlite-harness.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

/** A closed store file holding queue "q" with `jobs` pending jobs of 500-byte bodies. */
async function fileWithJobs(jobs: number): Promise<string> {
  const path = files.path();
  const store = await openSqliteStore(`sqlite:${path}`);
  await store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: T0 });
  await insert(
    store,
    "q",
    Array.from({ length: jobs }, () => ({ body: new Uint8Array(500) })),
  );
  await store.close();
  return path;
}

describe("sqlite store: opening a file", () => {
  it("creates the directory and the file on first open, and finds every queue and job again after a restart", async () => {
    const path = join(files.dir, "new", "deeper", "runlater.db");
    const first = await openSqliteStore(`sqlite:${path}`);
    expect(first.path).toBe(path);
    expect(first.migration).toEqual({ applied: ["0001_init"], version: 1 });
    await first.queueCreate({ name: "emails", config: resolveQueueConfig({ priorities: 5 }), now: T0 });
    const [pending, done] = await insert(first, "emails", [{ priority: 2 }, {}]);
    const [running] = await handOut(first, "emails", { limit: 1 });
    await first.jobCompleteMany({
      items: [{ id: running!.id, claimToken: running!.claimToken, customStatus: "ok" }],
      now: T0,
    });
    expect(running!.id).toBe(done);
    await first.close();

    const again = await openSqliteStore(`sqlite:${path}`);
    try {
      expect(again.migration).toEqual({ applied: [], version: 1 });
      expect((await again.queueGet({ name: "emails" }))?.config.priorities).toBe(5);
      const [p, d] = await again.jobGetMany({ ids: [pending!, done!] });
      expect(p).toMatchObject({ state: "pending", priority: 2 });
      expect(d).toMatchObject({ state: "succeeded", customStatus: "ok" });
      expect(await again.queueStats({ name: "emails", now: T0 })).toMatchObject({ pending: 1, succeeded: 1 });
    } finally {
      await again.close();
    }
  });

  it("refuses a second store on a file that is open, naming the holder; takes it once that one closes", async () => {
    const path = files.path();
    const owner = await openSqliteStore(`sqlite:${path}`);
    await expect(openSqliteStore(`sqlite:${path}`)).rejects.toThrow(
      new RegExp(
        `${path} is in use by another runlater process \\(pid ${process.pid} on .*: one server owns a SQLite file`,
      ),
    );
    await owner.close();
    const next = await openSqliteStore(`sqlite:${path}`);
    await next.close();
  });

  it("gives a new owner every partition at once: the leases of the process before it ended with it", async () => {
    const path = files.path();
    const before = await openSqliteStore(`sqlite:${path}`);
    await before.queueCreate({ name: "q", config: resolveQueueConfig({}), now: T0 });
    const epoch = await lease(before, "q", 0, T0, "old-broker");
    await before.brokerHeartbeat({ id: "old-broker", url: "http://old", ttlMs: 60_000, now: T0 });
    await before.close(); // as if it had died holding them: nothing was released

    const after = await openSqliteStore(`sqlite:${path}`);
    try {
      expect(await after.brokerList({ now: T0 })).toEqual([]);
      const taken = await after.leaseAcquire({ queue: "q", partition: 0, owner: "new-broker", ttlMs: 5000, now: T0 });
      expect(taken?.epoch).toBe(epoch + 1); // epochs only grow
    } finally {
      await after.close();
    }
  });

  it("finds what an earlier process claimed and never started pending again, for the next owner", async () => {
    const path = files.path();
    const before = await openSqliteStore(`sqlite:${path}`);
    await before.queueCreate({ name: "q", config: resolveQueueConfig({}), now: T0 });
    const ids = await insert(before, "q", [{}, {}, {}]);
    const epoch = await lease(before, "q", 0, T0, "old-broker");
    const claimed = await before.jobClaimMany({ queue: "q", partition: 0, epoch, limit: 10, now: T0 });
    expect(claimed.map((j) => [j.id, j.state])).toEqual(ids.map((id) => [id, "buffered"]));
    await before.close(); // its buffers died with it

    const after = await openSqliteStore(`sqlite:${path}`);
    try {
      expect((await after.jobGetMany({ ids })).map((j) => j?.state)).toEqual(["pending", "pending", "pending"]);
      const next = await lease(after, "q", 0, T0, "new-broker");
      const again = await after.jobClaimMany({ queue: "q", partition: 0, epoch: next, limit: 10, now: T0 });
      expect(again.map((j) => j.id)).toEqual(ids);
      expect(again.every((j) => j.attempt === 0 && j.attemptsRemaining === 3)).toBe(true); // charged nothing
    } finally {
      await after.close();
    }
  });

  it("refuses a path that is a directory, or under a file, or that cannot be written", async () => {
    const dir = join(files.dir, "a-directory");
    mkdirSync(dir);
    await expect(openSqliteStore(`sqlite:${dir}`)).rejects.toThrow(`${dir} is a directory`);
    const file = files.path("plain-file");
    writeFileSync(file, "");
    await expect(openSqliteStore(`sqlite:${file}/x.db`)).rejects.toThrow(`cannot create the directory of ${file}/x.db`);
    // Not writable even by root: a file system without files of ours.
    await expect(openSqliteStore("sqlite:/proc/runlater.db")).rejects.toThrow(
      /cannot open or create \/proc\/runlater\.db .*is its directory writable\?/,
    );
  });

  it("refuses a file that is not a database, and one that is damaged, with what to do", async () => {
    const text = files.path("text");
    writeFileSync(text, "these are not the droids you are looking for; ".repeat(100));
    await expect(openSqliteStore(`sqlite:${text}`)).rejects.toThrow(
      `${text} is not a SQLite database (file is not a database): is --store sqlite:PATH pointing at the right file?`,
    );
    const truncated = await fileWithJobs(300);
    truncateSync(truncated, 8192);
    await expect(openSqliteStore(`sqlite:${truncated}`)).rejects.toThrow(
      `${truncated} is damaged (database disk image is malformed): restore it from a backup (runlater backup)`,
    );
    const scrambled = await fileWithJobs(300);
    const bytes = readFileSync(scrambled);
    for (let i = 4096; i < bytes.length; i++) bytes[i] = (i * 7) & 255;
    writeFileSync(scrambled, bytes);
    await expect(openSqliteStore(`sqlite:${scrambled}`)).rejects.toThrow(`${scrambled} is damaged`);
  });

  it("refuses another program's database and one written by a newer runlater, changing neither", async () => {
    const foreign = files.path("foreign");
    const other = new DatabaseSync(foreign);
    other.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY)");
    other.close();
    await expect(openSqliteStore(`sqlite:${foreign}`)).rejects.toThrow(
      `${foreign} is a SQLite database of something else (it has tables, but not runlater's)`,
    );
    const newer = await fileWithJobs(1);
    const db = new DatabaseSync(newer);
    db.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '0099_future', 0)");
    db.close();
    await expect(openSqliteStore(`sqlite:${newer}`)).rejects.toThrow(
      `${newer} has schema version 99, newer than this runlater knows (1)`,
    );
    const check = new DatabaseSync(foreign, { readOnly: true });
    expect(check.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all()).toEqual([{ name: "invoices" }]);
    check.close();
  });

  it("releases the file when opening fails, so the next open can take it", async () => {
    const newer = await fileWithJobs(1);
    const db = new DatabaseSync(newer);
    db.exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, '0099_future', 0)");
    await expect(openSqliteStore(`sqlite:${newer}`)).rejects.toThrow(/newer than this runlater knows/);
    db.exec("DELETE FROM schema_migrations WHERE version = 99");
    db.close();
    const store = await openSqliteStore(`sqlite:${newer}`);
    expect(await store.jobCount({ queue: "q", filter: {}, now: T0 })).toBe(1);
    await store.close();
    expect(existsSync(`${newer}-lock`)).toBe(true); // the side file stays; its lock went with the process
  });
});
