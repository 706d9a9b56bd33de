/**
 * `runlater migrate` and `runlater backup` on a SQLite store, through the CLI in this
 * process: the backup is taken while the store keeps writing on its own thread (online),
 * and restoring it (opening a store on the copy) gives back everything acknowledged
 * before the backup began.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { resolveQueueConfig } from "../../src/domain/queue-config.js";
import { openSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { runIn } from "../cli-harness.js";
import { insert, T0 } from "../storetest/fixtures.js";
import { SqliteFiles } from "./sqlite-harness.js";

const files = new SqliteFiles();
afterAll(() => files.dispose());

describe("runlater migrate on a sqlite: store", () => {
  it("creates the schema once, records its version, and says so", async () => {
    const path = files.path();
    const first = await runIn(["migrate", "--store", `sqlite:${path}`], {});
    expect(first).toEqual({ code: 0, stdout: `sqlite (${path}): applied 0001_init; schema version 1\n`, stderr: "" });
    const again = await runIn(["migrate", "--store", `sqlite:${path}`], {});
    expect(again.stdout).toBe(`sqlite (${path}): up to date at schema version 1\n`);
    const db = new DatabaseSync(path, { readOnly: true });
    expect(db.prepare("SELECT version, name FROM schema_migrations").all()).toEqual([
      { version: 1, name: "0001_init" },
    ]);
    db.close();
  });

  it("refuses while a server owns the file, and a mix of store kinds", async () => {
    const path = files.path();
    const store = await files.open(path);
    const busy = await runIn(["migrate", "--store", `sqlite:${path}`], {});
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`error: ${path} is in use by another runlater process`);
    await store.close();
    const mixed = await runIn(["migrate", "--store", `sqlite:${path}`, "--store", "mysql://root@127.0.0.1/x"], {});
    expect(mixed.stderr).toContain('one kind at a time, got "sqlite:');
  });
});

describe("runlater backup", () => {
  it("copies a store while it keeps writing; the copy restores everything acknowledged before the backup began", async () => {
    const path = files.path();
    const store = await files.open(path);
    await store.queueCreate({ name: "q", config: resolveQueueConfig({}), now: T0 });
    const before = await insert(
      store,
      "q",
      Array.from({ length: 2000 }, (_, i) => ({ body: new TextEncoder().encode(`job ${i}`) })),
    );
    // Enqueues keep landing, on the store's own thread, while the backup reads its snapshot.
    let writing = true;
    const during: string[] = [];
    const writer = (async () => {
      while (writing)
        during.push(
          ...(await insert(
            store,
            "q",
            Array.from({ length: 50 }, () => ({})),
          )),
        );
    })();
    const dest = join(files.dir, "backups", "copy.db");
    const result = await runIn(["backup", dest, "--store", `sqlite:${path}`], {});
    writing = false;
    await writer;
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^backed up ${path} to ${dest}: \\d+ bytes, 1 queues, \\d+ jobs, schema version 1; integrity check ok\\n$`,
      ),
    );
    expect(during.length).toBeGreaterThan(0);

    const restored = await openSqliteStore(`sqlite:${dest}`);
    try {
      const jobs = await restored.jobGetMany({ ids: before });
      expect(jobs.every((j) => j?.state === "pending")).toBe(true);
      expect(new TextDecoder().decode(jobs[1999]!.body)).toBe("job 1999");
      const copied = await restored.jobCount({ queue: "q", filter: {}, now: T0 });
      expect(copied).toBeGreaterThanOrEqual(before.length);
      expect(copied).toBeLessThanOrEqual(before.length + during.length);
      expect((await restored.queueStats({ name: "q", now: T0 })).pending).toBe(copied); // counts restored with the jobs
    } finally {
      await restored.close();
    }
    expect(await store.jobCount({ queue: "q", filter: {}, now: T0 })).toBe(before.length + during.length);
  });

  it("never overwrites, needs an existing sqlite: store, and says what went wrong", async () => {
    const path = files.path();
    await (await files.open(path)).close();
    const taken = files.path("taken");
    writeFileSync(taken, "precious");
    const over = await runIn(["backup", taken, "--store", `sqlite:${path}`], {});
    expect(over).toMatchObject({
      code: 1,
      stderr: `error: ${taken} already exists: give backup a new file name (it never overwrites)\n`,
    });
    const missing = files.path("missing");
    const none = await runIn(["backup", files.path(), "--store", `sqlite:${missing}`], {});
    expect(none.stderr).toBe(`error: no database at ${missing}: is --store sqlite:PATH the server's file?\n`);
    expect(existsSync(missing)).toBe(false); // a backup never creates the store it copies
    const redis = await runIn(["backup", files.path(), "--store", "redis://127.0.0.1:6379"], {});
    expect(redis.stderr).toContain('backup copies a sqlite: store, got "redis://127.0.0.1:6379"');
    const usage = await runIn(["backup"], {});
    expect(usage.code).toBe(2);
  });
});
