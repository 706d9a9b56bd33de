/**
 * A Redis Cluster as the Redis store's shards: `redis+cluster://host:port[,host:port…]`
 * (`rediss+cluster://` for TLS), opened with ioredis's Cluster. docs/redis.md#redis-cluster.
 *
 * The store's scripts work on one shard's keys at a time: batches (enqueue, ACK,
 * checkpoint, lookup, the claim sweep) on every partition of a shard; hand-outs and leases
 * on a partition and its shard's ledgers. A cluster runs a script only on keys of one hash
 * slot, so here a shard is *virtual*: a hash tag that all of its keys start with
 * (`<prefix>:{<tag>}:…`; the first braces of a key decide its slot), one slot each. The
 * shard list is the list of tags, and everything else (placement, routing, the shard
 * checks) is the sharded store's, unchanged.
 *
 * Tags are chosen once, when a prefix is first opened, round-robin over the masters then
 * serving slots, so consecutive shards (a queue's consecutive partitions) land on
 * different masters; they are recorded (tagsKey), because a later resharding moves slots
 * between masters but must never change which tag a shard is. `?shards=N` (default: the
 * number of masters) sets how many; a larger N later appends tags, as an added --store URL
 * appends a shard.
 *
 * `?wait=N` (`&waitTimeoutMs=T`, default 1000): after each script that writes, WAIT N T on
 * the same master, so a write is answered only once N replicas have it; fewer in time
 * fails the call (the write may or may not survive a failover: the caller retries).
 */
import { Cluster, type Redis } from "ioredis";
import { Keys } from "./keys.js";
import { defineScripts, type ScriptName, scriptSources } from "./scripts.js";

export const CLUSTER_SCHEMES = ["redis+cluster:", "rediss+cluster:"];

export interface ClusterUrl {
  nodes: Array<{ host: string; port: number }>;
  tls: boolean;
  username?: string;
  password?: string;
  /** Virtual shards wanted (undefined: as recorded, or the masters' count for a new prefix). */
  shards?: number;
  /** Replicas each write must reach before it is answered (0: no WAIT). */
  wait: number;
  waitTimeoutMs: number;
}

const usage = "redis+cluster://[user:password@]host:port[,host:port…][?shards=N&wait=N&waitTimeoutMs=T]";

/** Each option's range: shards a prefix may have, replicas a write may wait for, and that wait in ms. */
const RANGES = { shards: [1, 1024], wait: [0, 16], waitTimeoutMs: [1, 60_000] } as const;

function wholeNumber(url: string, name: keyof typeof RANGES, value: string): number {
  const [min, max] = RANGES[name];
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max)
    throw new Error(`redis cluster URL ${url}: ${name}=${value} must be a whole number from ${min} to ${max}`);
  return n;
}

/** Parses a cluster store URL, refusing anything it does not understand. */
export function parseClusterUrl(url: string): ClusterUrl {
  const match = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?]+)\/?(?:\?(.*))?$/.exec(url);
  if (!match) throw new Error(`redis cluster URL ${redact(url)}: expected ${usage}`);
  const [, scheme, auth, hosts, query] = match;
  const nodes = hosts!.split(",").map((hostPort) => {
    const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(hostPort);
    if (!m || Number(m[2]) === 0 || Number(m[2]) > 65535)
      throw new Error(`redis cluster URL ${redact(url)}: "${hostPort}" is not host:port (expected ${usage})`);
    return { host: m[1]!.replace(/^\[|\]$/g, ""), port: Number(m[2]) };
  });
  const parsed: ClusterUrl = { nodes, tls: scheme === "rediss", wait: 0, waitTimeoutMs: 1000 };
  if (auth) {
    const colon = auth.indexOf(":");
    if (colon >= 0) {
      parsed.username = decodeURIComponent(auth.slice(0, colon)) || undefined;
      parsed.password = decodeURIComponent(auth.slice(colon + 1));
    } else parsed.password = decodeURIComponent(auth);
  }
  for (const [name, value] of new URLSearchParams(query ?? "")) {
    if (name === "shards") parsed.shards = wholeNumber(redact(url), name, value);
    else if (name === "wait") parsed.wait = wholeNumber(redact(url), name, value);
    else if (name === "waitTimeoutMs") parsed.waitTimeoutMs = wholeNumber(redact(url), name, value);
    else throw new Error(`redis cluster URL ${redact(url)}: unknown option ${name} (expected ${usage})`);
  }
  return parsed;
}

/** The URL without its password, for messages. */
export function redact(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//");
}

/** The open cluster: one handle per virtual shard, with the key names on it. */
export interface OpenCluster {
  cluster: Cluster;
  shards: Redis[];
  keys: Map<Redis, Keys>;
}

export async function openCluster(
  url: string,
  prefix: string,
  o: { requireNoEviction: boolean; onError?: (err: Error, shard: number) => void },
): Promise<OpenCluster> {
  const u = parseClusterUrl(url);
  const cluster = new Cluster(u.nodes, {
    lazyConnect: true,
    enableAutoPipelining: true,
    // Not the scripts: their numkeys comes first, which ioredis's cluster autopipelining
    // takes for the first key, so it would group a script with another slot's commands
    // ("All keys in the pipeline should belong to the same slots allocation group").
    autoPipeliningIgnoredCommands: [...scriptSources().keys()],
    // While the cluster fails over, commands wait (retryDelayOnFailover, CLUSTERDOWN
    // retries) a few times and then fail, so the API answers `unavailable`.
    redisOptions: {
      username: u.username,
      password: u.password,
      tls: u.tls ? {} : undefined,
      maxRetriesPerRequest: 3,
    },
  });
  cluster.on("error", (err: Error) => o.onError?.(err, 0));
  // A node that cannot be reached may have failed over: read the slot map again. A command
  // that failed on a dead master (after its few reconnection attempts) does not refresh it
  // itself, so without this the client would keep sending to the dead node after its
  // replica took over. (Not a periodic refresh: ioredis rebuilds its 16384-slot map each
  // time, which costs a busy process milliseconds per refresh.) Concurrent calls share one.
  cluster.on("node error", () => cluster.refreshSlotsCache());
  try {
    await connectCluster(cluster, url);
    defineScripts(cluster as unknown as Redis);
    if (o.requireNoEviction) await checkNoEviction(cluster);
    const tags = await recordTags(cluster, prefix, u.shards);
    const keys = new Map<Redis, Keys>();
    const shards = tags.map((tag) => {
      const shard = shardHandle(cluster, u.wait, u.waitTimeoutMs);
      keys.set(shard, new Keys(`${prefix}:{${tag}}`));
      return shard;
    });
    return { cluster, shards, keys };
  } catch (err) {
    cluster.disconnect();
    throw err;
  }
}

async function connectCluster(cluster: Cluster, url: string): Promise<void> {
  let cause: Error | undefined;
  const onError = (err: Error) => (cause ??= err);
  cluster.on("error", onError);
  try {
    await cluster.connect();
    // connect() resolves once the slot map is read; a cluster with unserved slots fails here, not on first use.
    const info = String(await cluster.cluster("INFO"));
    const state = /cluster_state:(\w+)/.exec(info)?.[1];
    if (state !== "ok") throw new Error(`cluster_state is ${state ?? "unknown"} (slots not all served)`);
  } catch (err) {
    const why = (cause as { lastNodeError?: Error } | undefined)?.lastNodeError ?? cause ?? (err as Error);
    throw new Error(`redis cluster ${redact(url)}: cannot connect: ${why.message}`);
  } finally {
    cluster.off("error", onError);
  }
}

/** maxmemory-policy on every master (CONFIG may be disabled on managed services: then it cannot be checked). */
async function checkNoEviction(cluster: Cluster): Promise<void> {
  for (const node of cluster.nodes("master")) {
    const policy = await node.config("GET", "maxmemory-policy").then(
      (reply) => (reply as string[])[1],
      () => undefined,
    );
    if (policy !== undefined && policy !== "noeviction")
      throw new Error(
        `redis cluster node ${node.options.host}:${node.options.port}: maxmemory-policy is ${policy}; runlater needs noeviction (an evicted job is a lost job): CONFIG SET maxmemory-policy noeviction on every node`,
      );
  }
}

/** Where a prefix's shard tags are recorded (one JSON list; its own slot). */
export function tagsKey(prefix: string): string {
  return `${prefix}:{meta}:cluster-tags`;
}

/** Replaces the recorded list only if it is still the one read (two servers may open at once). */
const SWAP_TAGS = `local now = redis.call("GET", KEYS[1]) or ""
if now == ARGV[1] then redis.call("SET", KEYS[1], ARGV[2]) return ARGV[2] end
return now`;

/** The prefix's shard tags: as recorded, with tags appended (or first chosen) up to `wanted`. */
async function recordTags(cluster: Cluster, prefix: string, wanted: number | undefined): Promise<string[]> {
  const key = tagsKey(prefix);
  const stored = await cluster.get(key);
  const tags = stored === null ? [] : (JSON.parse(stored) as string[]);
  const count = wanted ?? (tags.length || slotsByMaster(cluster).length);
  if (count < tags.length)
    throw new Error(
      `redis cluster: prefix "${prefix}" has ${tags.length} shards; ?shards=${count} would drop some (shards cannot be removed)`,
    );
  if (count === tags.length) return tags;
  const grown = [...tags, ...chooseTags(slotsByMaster(cluster), tags.length, count)];
  const result = (await cluster.eval(SWAP_TAGS, 1, key, stored ?? "", JSON.stringify(grown))) as string;
  const recorded = JSON.parse(result) as string[];
  if (recorded.length < count)
    throw new Error(`redis cluster: another server changed prefix "${prefix}"'s shards while this one opened: retry`);
  return recorded;
}

/** Each master's slots (from ioredis's slot map), masters in the order of their first slot. */
function slotsByMaster(cluster: Cluster): number[][] {
  const byNode = new Map<string, number[]>();
  cluster.slots.forEach((nodes, slot) => {
    const master = nodes?.[0];
    if (!master) return;
    const slots = byNode.get(master);
    if (slots) slots.push(slot);
    else byNode.set(master, [slot]);
  });
  return [...byNode.values()];
}

/** Tags for shards `from`..`to`-1: shard i on master i mod M, tags spread within each master's slots. */
export function chooseTags(masters: number[][], from: number, to: number): string[] {
  const tags: string[] = [];
  for (let i = from; i < to; i++) {
    const slots = new Set(masters[i % masters.length]);
    let n = 0;
    while (!slots.has(keySlot(`s${i}.${n}`))) n++;
    tags.push(`s${i}.${n}`);
  }
  return tags;
}

/** The hash slot of a key (CRC16-XMODEM of its hash tag, mod 16384), as Redis computes it. */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key);
  const open = bytes.indexOf(0x7b); // {
  const close = open >= 0 ? bytes.indexOf(0x7d, open + 1) : -1; // }
  const hashed = close > open + 1 ? bytes.subarray(open + 1, close) : bytes;
  let crc = 0;
  for (const byte of hashed) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

/** Scripts that write nothing: no WAIT after them. */
const READ_ONLY = new Set<ScriptName>([
  "job_get_many",
  "job_next_due_at",
  "job_peek_many",
  "job_scan",
  "queue_stats",
  "instance_list",
]);

type Pipelined = (...args: unknown[]) => { wait(replicas: number, ms: number): { exec(): Promise<unknown> } };

/**
 * One virtual shard's handle on the cluster client: the client itself under its own
 * identity (the shard router keys its per-shard groups by handle), methods bound to the
 * client. With `wait` > 0, a write script (`<name>Buffer`, as runScript calls it) runs in a
 * pipeline with WAIT, which ioredis sends to the master of the script's slot.
 */
function shardHandle(cluster: Cluster, wait: number, waitTimeoutMs: number): Redis {
  const bound = new Map<PropertyKey, unknown>();
  return new Proxy(cluster, {
    get(target, prop) {
      if (bound.has(prop)) return bound.get(prop);
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== "function") return value;
      const name = typeof prop === "string" && prop.endsWith("Buffer") ? (prop.slice(0, -6) as ScriptName) : undefined;
      const fn =
        wait > 0 && name && name in target.scriptsSet && !READ_ONLY.has(name)
          ? async (...args: unknown[]) => {
              const pipeline = target.pipeline() as unknown as Record<string, Pipelined>;
              const replies = (await pipeline[prop as string]!(...args)
                .wait(wait, waitTimeoutMs)
                .exec()) as Array<[Error | null, unknown]>;
              const [[scriptErr, reply], [waitErr, acked]] = replies as [
                [Error | null, unknown],
                [Error | null, number],
              ];
              if (scriptErr) throw scriptErr;
              if (waitErr) throw waitErr;
              if (acked < wait)
                throw new Error(
                  `redis cluster: a write reached ${acked} of ${wait} replicas within ${waitTimeoutMs} ms (WAIT): it may be lost on a failover`,
                );
              return reply;
            }
          : (value as (...a: unknown[]) => unknown).bind(target);
      bound.set(prop, fn);
      return fn;
    },
  }) as unknown as Redis;
}
