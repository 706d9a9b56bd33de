/**
 * One MySQL/MariaDB database (a store shard): a connection pool, session settings, and
 * transactions that retry transient failures (deadlock, lock wait timeout, lost
 * connection, server restart) until a time budget runs out.
 *
 * Retrying is safe when the failure came before COMMIT: the server rolled the
 * transaction back. A failure *during* COMMIT is ambiguous (it may have committed), so it
 * is retried only for work that checks for its own earlier success (enqueue looks its ids
 * up first); everything else gets an AmbiguousCommitError to handle.
 */
import { setTimeout as sleep } from "node:timers/promises";
import {
  createConnection,
  createPool,
  type Pool,
  type PoolConnection,
  type ResultSetHeader,
  type RowDataPacket,
} from "mysql2/promise";
import { invalidArgument } from "../../domain/errors.js";
import { isBrokenConnection, isTransient } from "./transient.js";

export type Conn = PoolConnection;
export type Param = string | number | bigint | boolean | null | Buffer;

export interface ConnectionSettings {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

/** mysql://user:pass@host:port/database */
export function parseMysqlUrl(url: string): ConnectionSettings {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalidArgument("store", `"${url}" is not a URL: use mysql://user:password@host:port/database`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (parsed.protocol !== "mysql:" || !/^[A-Za-z0-9_]{1,64}$/.test(database)) {
    throw invalidArgument(
      "store",
      `"${url}" must look like mysql://user:password@host:port/database (database: letters, digits, _)`,
    );
  }
  return {
    host: parsed.hostname || "127.0.0.1",
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username) || "root",
    password: decodeURIComponent(parsed.password),
    database,
  };
}

/** The commit may or may not have happened: the connection broke while COMMIT was in flight. */
export class AmbiguousCommitError extends Error {
  constructor(readonly cause: unknown) {
    super(
      `the connection to MySQL broke during COMMIT; the transaction may or may not have been applied: ${String((cause as Error)?.message ?? cause)}`,
    );
    this.name = "AmbiguousCommitError";
  }
}

export interface ShardOptions {
  /** How long a transaction keeps retrying transient errors (ms). */
  retryForMs: number;
  connectionLimit: number;
  /** Told about each broken or refused connection before the retry (lock conflicts are not reported). */
  onConnectionError?: (err: Error, shard: number) => void;
}

export interface TransactionOptions {
  /** The work detects its own earlier success, so a failure during COMMIT may be retried. */
  retryAmbiguousCommit?: boolean;
}

// Short lock waits: our transactions are short, so a long wait means a conflict worth retrying.
const SESSION_SETUP = [
  // No gap locks: a locking read of a range (the claim-timeout sweep's) must not block writes into it.
  "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
  "SET SESSION sql_mode = 'STRICT_ALL_TABLES,NO_ENGINE_SUBSTITUTION'",
  "SET SESSION innodb_lock_wait_timeout = 5",
];

/**
 * MariaDB only (MySQL 8 has no such variable: error 1193, ignored): end a transaction
 * whose client went quiet in the middle of it. A broker paused or cut off between the
 * statements of a start holds a shared lock on its partition's lease row; without this,
 * the takeover by another broker would wait for that lock as long as the pause lasts.
 * Our transactions are a few milliseconds of back-to-back statements, so 3 s idle inside
 * one means the client is stalled; its next statement fails and is retried, fenced.
 */
const STALLED_TRANSACTION_SETUP = "SET SESSION idle_transaction_timeout = 3";
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

export class Shard {
  readonly settings: ConnectionSettings;
  private readonly pool: Pool;
  private readonly prepared = new WeakSet<object>();

  constructor(
    readonly index: number,
    url: string,
    private readonly o: ShardOptions,
  ) {
    this.settings = parseMysqlUrl(url);
    this.pool = createPool({
      ...this.settings,
      connectionLimit: o.connectionLimit,
      maxIdle: o.connectionLimit,
      idleTimeout: 60_000,
      enableKeepAlive: true,
      connectTimeout: 5_000,
      supportBigNumbers: true,
      charset: "utf8mb4",
      // Statements with a variable number of rows would otherwise fill the server's
      // max_prepared_stmt_count (execute() prepares each distinct text once per connection).
      maxPreparedStatements: 64,
    });
  }

  /** Creates the database if it is missing (a connection without a default database). */
  async ensureDatabase(): Promise<void> {
    await this.retrying(async () => {
      const { database, ...rest } = this.settings;
      const conn = await createConnection({ ...rest, connectTimeout: 5_000 });
      try {
        // An identifier cannot be a bound parameter; parseMysqlUrl allows only [A-Za-z0-9_].
        await conn.query(`CREATE DATABASE IF NOT EXISTS \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      } finally {
        await conn.end().catch(() => undefined);
      }
    });
  }

  /** Runs `work` on one connection outside a transaction (autocommit); retried when transient. */
  async session<T>(work: (c: Conn) => Promise<T>): Promise<T> {
    return this.retrying(async () => {
      const conn = await this.connection();
      try {
        const result = await work(conn);
        conn.release();
        return result;
      } catch (err) {
        discard(conn, err);
        throw err;
      }
    });
  }

  /** Runs `work` in one transaction, retrying it whole on transient errors. */
  async transaction<T>(work: (c: Conn, attempt: number) => Promise<T>, o: TransactionOptions = {}): Promise<T> {
    let attempt = 0;
    return this.retrying(async () => {
      const conn = await this.connection();
      let committing = false;
      try {
        await conn.query("START TRANSACTION");
        const result = await work(conn, attempt++);
        committing = true;
        await conn.query("COMMIT");
        conn.release();
        return result;
      } catch (err) {
        if (!committing) await conn.query("ROLLBACK").catch(() => undefined);
        discard(conn, err);
        if (committing && isTransient(err) && !o.retryAmbiguousCommit) throw new AmbiguousCommitError(err);
        throw err;
      }
    });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  private async connection(): Promise<Conn> {
    const conn = await this.pool.getConnection();
    const core = (conn as unknown as { connection: object }).connection;
    if (!this.prepared.has(core)) {
      try {
        for (const sql of SESSION_SETUP) await conn.query(sql);
        await conn.query(STALLED_TRANSACTION_SETUP).catch((err: { errno?: number }) => {
          if (err.errno !== ER_UNKNOWN_SYSTEM_VARIABLE) throw err;
        });
      } catch (err) {
        discard(conn, err);
        throw err;
      }
      this.prepared.add(core);
    }
    return conn;
  }

  private async retrying<T>(run: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.o.retryForMs;
    for (let attempt = 0; ; attempt++) {
      try {
        return await run();
      } catch (err) {
        if (isBrokenConnection(err)) this.o.onConnectionError?.(err as Error, this.index);
        if (err instanceof AmbiguousCommitError || !isTransient(err) || Date.now() >= deadline) throw err;
        // Jittered exponential backoff, capped: a restarting server is back within seconds.
        await sleep(Math.min(1000, 20 * 2 ** attempt) * (0.5 + Math.random() / 2));
      }
    }
  }
}

/** A connection an error broke is destroyed (the pool opens a fresh one); any other goes back. */
function discard(conn: Conn, err: unknown): void {
  if (isBrokenConnection(err)) conn.destroy();
  else conn.release();
}

/** SELECT: rows as plain objects. Uses the binary protocol when a Buffer is bound. */
export async function select<T = Record<string, unknown>>(c: Conn, sql: string, params: Param[] = []): Promise<T[]> {
  const [rows] = hasBuffer(params)
    ? await c.execute<RowDataPacket[]>(sql, params)
    : await c.query<RowDataPacket[]>(sql, params);
  return rows as unknown as T[];
}

/** INSERT/UPDATE/DELETE: the number of rows matched (mysql2 asks for found rows). */
export async function run(c: Conn, sql: string, params: Param[] = []): Promise<number> {
  // Bodies go over the binary protocol: raw bytes, not hex text twice their size.
  const [result] = hasBuffer(params)
    ? await c.execute<ResultSetHeader>(sql, params)
    : await c.query<ResultSetHeader>(sql, params);
  return result.affectedRows;
}

function hasBuffer(params: Param[]): boolean {
  return params.some((p) => Buffer.isBuffer(p));
}

/** `?, ?, ?` for an IN list. The count is ours; the values are always bound. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, () => "?").join(", ");
}
