/**
 * MySQL test isolation: each test file gets fresh databases on the test server
 * (services.ts), named after the file and this process, dropped again when it ends.
 */
import { createConnection } from "mysql2/promise";
import { parseMysqlUrl, type Shard, select } from "../../src/store/mysql/shard.js";
import { mysqlUrl } from "../services.js";

let counter = 0;

/** A URL for a database no other test file uses; `drop()` removes every one made here. */
export function freshDatabaseUrl(label: string): string {
  const base = mysqlUrl();
  const name = `rl_${label}_${process.pid}_${++counter}`;
  created.push(name);
  return base.replace(/\/[^/]*$/, `/${name}`);
}

const created: string[] = [];

/** Closes what the file opened on those databases (connections would keep them busy), then drops every one made here. */
export async function dropDatabases(...opened: Array<{ close(): Promise<void> } | undefined>): Promise<void> {
  await Promise.all(opened.map((o) => o?.close()));
  const { database: _, ...settings } = parseMysqlUrl(mysqlUrl());
  const conn = await createConnection(settings);
  try {
    // Names come from freshDatabaseUrl: letters, digits and underscores only.
    for (const name of created.splice(0)) await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
  } finally {
    await conn.end();
  }
}

/** The columns of an EXPLAIN row the plan tests look at. */
export interface PlanRow {
  type: string | null;
  key: string | null;
  Extra: string | null;
}

/** EXPLAIN of a statement with its parameters, on `shard`. */
export async function explain(shard: Shard, statement: string, params: unknown[]): Promise<PlanRow[]> {
  return shard.session((c) => select<PlanRow>(c, `EXPLAIN ${statement}`, params as never));
}
