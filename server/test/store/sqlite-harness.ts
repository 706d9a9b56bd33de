/** Fresh SQLite store files for tests, under one temporary directory per test file, removed at the end. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore, type SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

export class SqliteFiles {
  readonly dir = mkdtempSync(join(tmpdir(), "runlater-sqlite-"));
  private readonly opened: SqliteStore[] = [];
  private n = 0;

  /** A path for a database file that does not exist yet. */
  path(name = `db${++this.n}`): string {
    return join(this.dir, `${name}.db`);
  }

  /** Opens a store on a new file (or on `path`), closed by dispose(). */
  async open(path = this.path(), query = ""): Promise<SqliteStore> {
    const store = await openSqliteStore(`sqlite:${path}${query}`);
    this.opened.push(store);
    return store;
  }

  async dispose(): Promise<void> {
    await Promise.all(this.opened.map((s) => s.close().catch(() => {})));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
