/**
 * The adversarial suite's setup: a real server (one process, the HTTP port, every
 * protocol) on a chosen store, with every store call counted, and `rpc`, a Connect JSON
 * call made the way curl makes it (so answers are seen exactly as a client sees them).
 */

import { pino } from "pino";
import { type RunningServer, type ServerOptions, startServer } from "../../server/src/server.js";
import { MemoryStore } from "../../server/src/store/memory/memory-store.js";
import { openMysqlStore } from "../../server/src/store/mysql/mysql-store.js";
import type { Store } from "../../server/src/store/store.js";
import { dropDatabases, freshDatabaseUrl } from "../../server/test/store/mysql-harness.js";
import { openTestStore, cleanup as redisCleanup } from "../../server/test/store/redis-helpers.js";
import { SqliteFiles } from "../../server/test/store/sqlite-harness.js";

export type StoreKind = "memory" | "sqlite" | "redis" | "mysql";

/** Every store kind the suite runs on; tests that concern only the API layer take the first. */
export const storeKinds: StoreKind[] = ["memory", "sqlite", "redis", "mysql"];

export interface Target {
  server: RunningServer;
  /** Calls made to the store so far, by method name. */
  calls: Map<string, number>;
  /** Lines the server logged at level info or above, as parsed JSON. */
  logged: Array<Record<string, unknown>>;
  /** The messages of lines logged at level error (an internal error is one). */
  readonly errors: string[];
  rpc(method: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/** A fresh store; `cleanup` removes what the test left (the server closes the store itself when it stops). */
async function openStore(kind: StoreKind): Promise<{ store: Store; cleanup(): Promise<void> }> {
  if (kind === "memory") return { store: new MemoryStore(), cleanup: async () => {} };
  if (kind === "sqlite") {
    const files = new SqliteFiles();
    return { store: await files.open(), cleanup: () => files.dispose() };
  }
  if (kind === "redis") return { store: await openTestStore(), cleanup: () => redisCleanup() };
  const store = await openMysqlStore([freshDatabaseUrl("adversarial")]);
  return { store, cleanup: () => dropDatabases() };
}

/** Store methods to slow down, and by how many ms each call (to widen a race). */
export type Slowdowns = Partial<Record<keyof Store, number>>;

/** A store whose every method call is counted in `calls`, and the methods named in `slow` delayed. */
function counted(store: Store, calls: Map<string, number>, slow: Slowdowns): Store {
  return new Proxy(store, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      const delay = slow[name as keyof Store];
      return (...args: unknown[]) => {
        calls.set(String(name), (calls.get(String(name)) ?? 0) + 1);
        if (delay === undefined) return value.apply(target, args);
        return new Promise((resolve) => setTimeout(resolve, delay)).then(() => value.apply(target, args));
      };
    },
  });
}

/** A logger keeping every line at info or above, parsed, in `into`. */
function capturing(into: Array<Record<string, unknown>>) {
  return pino(
    { level: "info" },
    { write: (line: string) => void into.push(JSON.parse(line) as Record<string, unknown>) },
  );
}

export async function serve(
  kind: StoreKind,
  options: Partial<ServerOptions> & { slow?: Slowdowns } = {},
): Promise<Target> {
  const { slow, ...serverOptions } = options;
  const opened = await openStore(kind);
  const calls = new Map<string, number>();
  const logged: Array<Record<string, unknown>> = [];
  const server = await startServer({
    port: 0,
    log: capturing(logged),
    ...serverOptions,
    store: counted(opened.store, calls, slow ?? {}),
  });
  return {
    server,
    calls,
    logged,
    get errors() {
      return logged.filter((l) => (l.level as number) >= 50).map((l) => String(l.msg));
    },
    async rpc(method, body) {
      const res = await fetch(`${server.url}/runlater.v1.${method}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async stop() {
      await server.stop();
      await opened.cleanup();
    },
  };
}
