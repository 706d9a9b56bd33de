/**
 * Versioned schema migrations: migrations/NNNN_name.sql, applied in order, each recorded
 * in schema_migrations. Idempotent (applied versions are skipped) and safe when several
 * servers start at once: the whole run holds a named lock (GET_LOCK), so one server
 * migrates while the others wait and then find nothing left to do.
 *
 * DDL commits implicitly in MySQL, so a migration cannot be rolled back: each file is
 * written to be re-runnable (CREATE … IF NOT EXISTS), in case a crash lands between its
 * statements and its schema_migrations row.
 */
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { type Conn, Shard, select } from "./shard.js";

const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
const LOCK_NAME = "runlater_schema_migrations";
const LOCK_WAIT_SECONDS = 60;

const CREATE_MIGRATIONS_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migrations (
  version     INT NOT NULL,
  name        VARCHAR(255) NOT NULL,
  applied_at  BIGINT NOT NULL,
  PRIMARY KEY (version)
) ENGINE = InnoDB`;

export interface Migration {
  version: number;
  name: string;
  statements: string[];
}

export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => ({
      version: Number(file.slice(0, 4)),
      name: file.replace(/\.sql$/, ""),
      statements: splitStatements(await readFile(MIGRATIONS_DIR + file, "utf8")),
    })),
  );
}

/** Splits a migration file on `;` at line ends, dropping `--` comment lines. Our files hold no procedures. */
export function splitStatements(sql: string): string[] {
  const body = sql
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("--"))
    .join("\n");
  return body
    .split(/;\s*$/m)
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export interface MigrateResult {
  /** Names of the migrations this run applied (empty when already up to date). */
  applied: string[];
  /** The schema version now in place. */
  version: number;
}

/** Brings one shard's schema up to date. */
export async function migrate(shard: Shard, now = Date.now()): Promise<MigrateResult> {
  await shard.ensureDatabase();
  const migrations = await loadMigrations();
  return shard.session(async (c) => {
    const [lock] = await select<{ got: number | null }>(c, "SELECT GET_LOCK(?, ?) AS got", [
      LOCK_NAME,
      LOCK_WAIT_SECONDS,
    ]);
    if (lock?.got !== 1)
      throw new Error(
        `could not take the migration lock "${LOCK_NAME}" within ${LOCK_WAIT_SECONDS}s: is another migration stuck?`,
      );
    try {
      return await applyPending(c, migrations, now);
    } finally {
      await c.query("SELECT RELEASE_LOCK(?)", [LOCK_NAME]).catch(() => undefined);
    }
  });
}

async function applyPending(c: Conn, migrations: Migration[], now: number): Promise<MigrateResult> {
  await c.query(CREATE_MIGRATIONS_TABLE);
  const done = new Set(
    (await select<{ version: number }>(c, "SELECT version FROM schema_migrations")).map((r) => Number(r.version)),
  );
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.version)) continue;
    for (const statement of m.statements) await c.query(statement);
    await c.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)", [
      m.version,
      m.name,
      now,
    ]);
    applied.push(m.name);
    done.add(m.version);
  }
  return { applied, version: Math.max(0, ...done) };
}

/** Migrates the databases named by mysql:// URLs (one per shard), one after another. */
export async function migrateUrls(urls: string[]): Promise<Array<MigrateResult & { url: string }>> {
  const results: Array<MigrateResult & { url: string }> = [];
  for (const [i, url] of urls.entries()) {
    const shard = new Shard(i, url, { retryForMs: 10_000, connectionLimit: 1 });
    try {
      results.push({ url, ...(await migrate(shard)) });
    } finally {
      await shard.close();
    }
  }
  return results;
}
