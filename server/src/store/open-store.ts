/** Opens the store named by `--store` URLs. One URL per shard. */
import { invalidArgument } from "../domain/errors.js";
import { MemoryStore } from "./memory/memory-store.js";
import { openMysqlStore } from "./mysql/mysql-store.js";
import { openRedisStore } from "./redis/redis-store.js";
import { openSqliteStore } from "./sqlite/sqlite-store.js";
import { DEFAULT_SQLITE_URL, oneSqliteUrl } from "./sqlite/sqlite-url.js";
import type { Store } from "./store.js";

export interface OpenStoreOptions {
  /** Where connection trouble is reported (drivers reconnect by themselves). */
  onConnectionError?: (err: Error, shard: number) => void;
}

/** The --store URLs to use: the ones given, or the default SQLite file. */
export function storeUrls(urls: string[]): string[] {
  return urls.length === 0 ? [DEFAULT_SQLITE_URL] : urls;
}

/** The kind of store URLs name (memory, sqlite, redis, mysql …): every --store must be of one kind. */
export function storeKind(urls: string[]): string {
  const scheme = (url: string) =>
    url === "memory" ? "memory" : url.split(":")[0]!.replace(/^rediss?(\+cluster)?$/, "redis");
  const kinds = new Set(storeUrls(urls).map(scheme));
  if (kinds.size > 1) throw invalidArgument("store", `every --store must be of one kind, got ${[...kinds].join(", ")}`);
  return [...kinds][0]!;
}

export async function openStore(urls: string[], o: OpenStoreOptions = {}): Promise<Store> {
  const list = storeUrls(urls);
  const kind = storeKind(list);
  if (kind === "memory") {
    if (list.length > 1)
      throw invalidArgument("store", "the memory store has a single shard: give --store memory once");
    return new MemoryStore();
  }
  if (kind === "sqlite") return openSqliteStore(oneSqliteUrl(list));
  if (kind === "redis") return openRedisStore({ urls: list, onError: o.onConnectionError });
  if (kind === "mysql") return openMysqlStore(list, { onConnectionError: o.onConnectionError });
  throw invalidArgument(
    "store",
    `unknown store "${list[0]}": use sqlite:PATH (the default: ${DEFAULT_SQLITE_URL}), memory, redis://host:port[/db], redis+cluster://host:port[,host:port…] or mysql://user:password@host:port/database`,
  );
}
