/** EXPERIMENT: the same operations on the server's own thread, group-committed per turn of the event loop. */
import { RunlaterError } from "../../domain/errors.js";
import { SqliteContext } from "./context.js";
import type { MigrateResult } from "./migrate.js";
import { describeError, type OpenedDatabase, openDatabase } from "./open-database.js";
import { type OpName, type OpParams, type OpResult, ops } from "./ops.js";
import type { SqliteLocation } from "./sqlite-url.js";

export class InlineChannel {
  private queue: Array<{ op: OpName; params: unknown; resolve: (v: unknown) => void; reject: (e: Error) => void }> = [];
  private readonly ctx: SqliteContext;
  readonly path: string;
  readonly migration: MigrateResult;
  private constructor(private readonly opened: OpenedDatabase) {
    this.ctx = new SqliteContext(opened.db);
    this.path = opened.path;
    this.migration = opened.migration;
  }
  static async open(location: SqliteLocation): Promise<InlineChannel> {
    return new InlineChannel(openDatabase(location));
  }
  call<K extends OpName>(op: K, params: OpParams<K>): Promise<OpResult<K>> {
    if (this.queue.length === 0) setImmediate(() => this.flush());
    return new Promise((resolve, reject) =>
      this.queue.push({ op, params, resolve: resolve as (v: unknown) => void, reject }),
    );
  }
  private flush(): void {
    const batch = this.queue;
    this.queue = [];
    const sql = (t: string) => this.ctx.stmt(t).run();
    sql("BEGIN IMMEDIATE");
    const out: Array<{ ok: boolean; v: unknown }> = [];
    for (const c of batch) {
      sql("SAVEPOINT call");
      try {
        const v = (ops[c.op] as (x: SqliteContext, p: unknown) => unknown)(this.ctx, c.params);
        this.ctx.flush();
        sql("RELEASE call");
        out.push({ ok: true, v });
      } catch (err) {
        this.ctx.discard();
        sql("ROLLBACK TO call");
        sql("RELEASE call");
        this.ctx.reload();
        out.push({ ok: false, v: err instanceof RunlaterError ? err : describeError(err, this.path) });
      }
    }
    sql("COMMIT");
    batch.forEach((c, i) => (out[i]!.ok ? c.resolve(out[i]!.v) : c.reject(out[i]!.v as Error)));
  }
  async close(): Promise<void> {
    if (this.queue.length) this.flush();
    this.opened.close();
  }
}
