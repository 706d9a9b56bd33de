/** Opens the store named by `--store` URLs. One URL per shard. */
import { invalidArgument } from "../domain/errors.js";
import { MemoryStore } from "./memory/memory-store.js";
import { openMysqlStore } from "./mysql/mysql-store.js";
import { openRedisStore } from "./redis/redis-store.js";
import type { Store } from "./store.js";

export interface OpenStoreOptions {
  /** Where connection trouble is reported (drivers reconnect by themselves). */
  onConnectionError?: (err: Error, shard: number) => void;
}

export async function openStore(urls: string[], o: OpenStoreOptions = {}): Promise<Store> {
  const list = urls.length === 0 ? ["memory"] : urls;
  const scheme = (url: string) => (url === "memory" ? "memory" : url.split(":")[0]);
  const kinds = new Set(list.map(scheme));
  if (kinds.size > 1) throw invalidArgument("store", `every --store must be of one kind, got ${[...kinds].join(", ")}`);
  const kind = [...kinds][0];
  if (kind === "memory") {
    if (list.length > 1)
      throw invalidArgument("store", "the memory store has a single shard: give --store memory once");
    return new MemoryStore();
  }
  if (kind === "redis" || kind === "rediss") return openRedisStore({ urls: list, onError: o.onConnectionError });
  if (kind === "mysql") return openMysqlStore(list, { onConnectionError: o.onConnectionError });
  throw invalidArgument(
    "store",
    `unknown store "${list[0]}": use memory, redis://host:port[/db] or mysql://user:password@host:port/database`,
  );
}
